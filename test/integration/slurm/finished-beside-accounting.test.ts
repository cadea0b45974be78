// Issue 35: the finished-beside cases on a private cluster with accounting (finished-beside.ts).
import { finishedBesideSuite } from './finished-beside.js';

finishedBesideSuite(true);
