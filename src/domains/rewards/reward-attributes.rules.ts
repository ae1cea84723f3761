// A CUSTOM reward's attributes against its type's schema: every required attribute present, every attribute declared
// and of its type (an integer a safe integer, an enum one of its values). Pure; errors name the path.
import type { ProblemFieldError } from '../../contract/problems.js';
import type { Attributes, AttributesSchema } from './reward.schemas.js';

export function attributeErrors(schema: AttributesSchema, attributes: Attributes, path = 'body.attributes'): ProblemFieldError[] {
  const errors: ProblemFieldError[] = [];
  for (const [name, spec] of Object.entries(schema.properties)) {
    if (spec.required && !Object.hasOwn(attributes, name)) errors.push({ path: `${path}.${name}`, message: 'required by the reward type' });
  }
  for (const [name, value] of Object.entries(attributes)) {
    const spec = Object.hasOwn(schema.properties, name) ? schema.properties[name] : undefined;
    const at = `${path}.${name}`;
    if (!spec) {
      errors.push({ path: at, message: 'not an attribute of the reward type' });
      continue;
    }
    switch (spec.type) {
      case 'string':
        if (typeof value !== 'string') errors.push({ path: at, message: 'expected a string' });
        break;
      case 'integer':
        if (typeof value !== 'number' || !Number.isSafeInteger(value)) errors.push({ path: at, message: 'expected an integer' });
        break;
      case 'boolean':
        if (typeof value !== 'boolean') errors.push({ path: at, message: 'expected a boolean' });
        break;
      case 'enum':
        if (typeof value !== 'string' || !spec.values!.includes(value)) errors.push({ path: at, message: `expected one of ${spec.values!.join(', ')}` });
        break;
    }
  }
  return errors;
}
