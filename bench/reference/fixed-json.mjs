// Reference servers answering one fixed JSON to POST: `bare` (node:http, the machine's ceiling) or `express`
// (express 5 with its JSON body parser, the framework's ceiling). Usage: node fixed-json.mjs bare|express PORT
import { createServer } from 'node:http';
import express from 'express';

const [mode, port] = process.argv.slice(2);
const answer = JSON.stringify({ valid: true, discount: { type: 'AMOUNT', amountOff: 500 } });

if (mode === 'bare') {
  createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(answer) });
      res.end(answer);
    });
  }).listen(Number(port), '127.0.0.1', () => process.send?.('ready'));
} else {
  const app = express();
  app.use(express.json());
  app.post('/{*any}', (_req, res) => res.type('application/json').send(answer));
  app.listen(Number(port), '127.0.0.1', () => process.send?.('ready'));
}
