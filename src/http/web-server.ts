// The HTTP server: the hot-path dispatcher first (when given), express for everything else.
import { createServer, type Server } from 'node:http';
import type { Express } from 'express';
import type { createHotPathDispatcher } from './hot-path-dispatcher.js';

export function createWebServer(app: Express, hotPath?: ReturnType<typeof createHotPathDispatcher>): Server {
  return createServer((req, res) => {
    if (hotPath?.(req, res)) return;
    app(req, res);
  });
}
