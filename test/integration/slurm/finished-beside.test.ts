// Issue 35: the finished-beside cases on a private cluster without accounting (finished-beside.ts).
import { finishedBesideSuite } from './finished-beside.js';

finishedBesideSuite(false);
