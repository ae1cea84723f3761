// The insights' short cache: an answer per workspace, question and input, kept 2 s, so a dashboard refreshing or many
// operators watching a flash sale cost one query per question every 2 s; concurrent misses share one query. One per
// service, created by the composition (web-service.ts) and reached through ServiceDeps.
import { LRUCache } from 'lru-cache';
import type { AnswerCache } from '../../contract/handler.js';

export const INSIGHT_CACHE_MS = 2_000;

export class InsightCache implements AnswerCache {
  private readonly answers = new LRUCache<string, Promise<unknown>>({ max: 5_000, ttl: INSIGHT_CACHE_MS });

  get<T>(workspaceId: string, question: string, input: unknown, compute: () => Promise<T>): Promise<T> {
    const key = `${workspaceId} ${question} ${JSON.stringify(input)}`;
    let answer = this.answers.get(key) as Promise<T> | undefined;
    if (!answer) {
      answer = compute();
      this.answers.set(key, answer);
      // A failed query is not kept: the next request asks again.
      answer.catch(() => this.answers.delete(key));
    }
    return answer;
  }
}
