// The same suite through express alone: both paths must answer identically.
import { describe } from 'vitest';
import { redemptionSuite } from './redemption-suite.js';

describe('hot operations via express', () => redemptionSuite(false));
