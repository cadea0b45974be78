// Issue 40 item 1: jobs under a run's name that are not its Request's, with accounting (ownership.ts).
import { ownershipSuite } from './ownership.js';

ownershipSuite(true);
