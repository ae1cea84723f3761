// A real service (own database, real app on 127.0.0.1) with operations beyond the registry's and a chosen version:
// the one composition (startWebService) through startTestService, so tests can add operations at test time.
import type { BoundHandler } from '../../src/contract/handler.js';
import { startTestService } from '../support/service.js';
import type { TestDatabase } from '../support/database.js';

export interface ServiceWithOperations {
  baseUrl: string;
  db: TestDatabase;
  newKey(scopes?: string[]): Promise<string>;
  close(): Promise<void>;
}

export async function startServiceWithOperations(options: { extra?: BoundHandler[]; version?: string } = {}): Promise<ServiceWithOperations> {
  const service = await startTestService({ extraHandlers: options.extra ?? [], ...(options.version ? { version: options.version } : {}) });
  return {
    baseUrl: service.baseUrl,
    db: service.db,
    newKey: async (scopes = ['*']) => (await service.newWorkspace(scopes)).key,
    close: () => service.close(),
  };
}
