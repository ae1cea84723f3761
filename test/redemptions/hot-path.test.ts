// The hot operations through the lean dispatcher (what production serves).
import { describe } from 'vitest';
import { redemptionSuite } from './redemption-suite.js';

describe('hot operations via the hot-path dispatcher', () => redemptionSuite(true));
