// The GitHub adapter: one import point for actions and use cases.
export * from './check-runs.js';
export * from './client.js';
export * from './comment-split.js';
export * from './contents.js';
export * from './labels.js';
export * from './permissions.js';
export * from './reactions.js';
export * from './sticky-comment.js';
