// Types of json-schema-to-ts.mjs, for the tests that import it.
export declare class TypeWriter {
  constructor(reserved?: readonly string[]);
  typeOf(jsonSchema: object, mode: 'input' | 'output'): string;
  declarations(): string;
}
