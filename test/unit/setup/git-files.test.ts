// The git reader `topo setup` and `topo doctor` read pins with tells what the server does not have (null)
// from an outage (an error), from git's own messages: a real git against a file:// server and against
// a local HTTP server answering 404, 500 or 401.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { gitFileReader } from '../../../src/setup/git-files.js';
import { gitServer } from '../../support/git-server.js';

const server = gitServer(['v1.0.0']);
const servers: Server[] = [];

async function answering(status: number): Promise<string> {
  const http = createServer((_req, res) => {
    res.statusCode = status;
    if (status === 401) res.setHeader('WWW-Authenticate', 'Basic realm="git"');
    res.end();
  });
  servers.push(http);
  await new Promise<void>((done) => http.listen(0, '127.0.0.1', done));
  return `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
}

afterAll(() => {
  for (const s of servers) s.close();
});

describe('gitFileReader', { timeout: 60_000 }, () => {
  it('reads a file at a tag and at a SHA; a missing tag, SHA, file or repository is null', async () => {
    const files = gitFileReader({ GITHUB_SERVER_URL: server.url });
    try {
      const path = '.github/workflows/reusable-submit.yml';
      expect(await files.read('alpasim-topo', 'alpasim-topo', path, 'v1.0.0')).toContain('uses:');
      expect(await files.read('alpasim-topo', 'alpasim-topo', path, server.sha)).toContain('uses:');
      expect(await files.read('alpasim-topo', 'alpasim-topo', path, 'v9.9.9')).toBeNull(); // couldn't find remote ref
      expect(await files.read('alpasim-topo', 'alpasim-topo', path, '1'.repeat(40))).toBeNull(); // not our ref
      expect(await files.read('alpasim-topo', 'alpasim-topo', 'no/such.yml', 'v1.0.0')).toBeNull();
      expect(await files.read('nobody', 'nothing', path, 'v1.0.0')).toBeNull(); // not a git repository
    } finally {
      files.close();
    }
  });

  it('a repository the HTTP server does not have (404) is null; a 500 or a refused login is an error', async () => {
    const missing = gitFileReader({ GITHUB_SERVER_URL: await answering(404) });
    const broken = gitFileReader({ GITHUB_SERVER_URL: await answering(500) });
    const login = gitFileReader({ GITHUB_SERVER_URL: await answering(401) });
    try {
      expect(await missing.read('o', 'r', 'action.yml', 'v1')).toBeNull();
      await expect(broken.read('o', 'r', 'action.yml', 'v1')).rejects.toThrow(/cannot fetch v1 .*error: 500/);
      await expect(login.read('o', 'r', 'action.yml', 'v1')).rejects.toThrow(/cannot fetch v1 .*Username/);
    } finally {
      for (const r of [missing, broken, login]) r.close();
    }
  });
});
