// The problem codes as the client types them; the client package's build puts a generated list in this file's place.
export type { ProblemCode } from '../contract/problems.js';
