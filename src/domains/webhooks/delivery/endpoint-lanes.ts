// Fair use of the worker's slots across endpoints: at most `perEndpoint` attempts run against one endpoint; more wait in
// its line while the expected wait (from the endpoint's recent attempt durations) fits the budget. A job that does not
// fit goes back to the queue, so a slow or dead endpoint cannot take the slots the others need.
export interface EndpointLanes<T> {
  /** Starts the item now, queues it, or answers 'full' (the caller defers it). */
  admit(endpointId: string, item: T, start: (item: T) => void): 'started' | 'queued' | 'full';
  /** An attempt against the endpoint ended after `durationMs`; starts the next in its line. */
  finished(endpointId: string, durationMs: number): void;
  /** Empties every line, answering what waited. */
  drain(): T[];
}

const MAX_TRACKED_ENDPOINTS = 10_000;

export function endpointLanes<T>(options: { perEndpoint: number; maxLine: number; waitBudgetMs: number }): EndpointLanes<T> {
  const running = new Map<string, number>();
  const lines = new Map<string, Array<{ item: T; start: (item: T) => void }>>();
  const averageMs = new Map<string, number>();

  /** Unknown endpoints get a line as long as their concurrency until a first attempt tells how fast they are. */
  function lineLimit(endpointId: string): number {
    const average = averageMs.get(endpointId);
    if (average === undefined) return options.perEndpoint;
    const fits = Math.floor((options.waitBudgetMs / Math.max(average, 1)) * options.perEndpoint);
    return Math.min(options.maxLine, Math.max(1, fits));
  }

  return {
    admit(endpointId, item, start) {
      const now = running.get(endpointId) ?? 0;
      if (now < options.perEndpoint) {
        running.set(endpointId, now + 1);
        start(item);
        return 'started';
      }
      const line = lines.get(endpointId) ?? [];
      if (line.length >= lineLimit(endpointId)) return 'full';
      line.push({ item, start });
      lines.set(endpointId, line);
      return 'queued';
    },
    finished(endpointId, durationMs) {
      const previous = averageMs.get(endpointId);
      if (previous === undefined && averageMs.size >= MAX_TRACKED_ENDPOINTS) averageMs.clear();
      averageMs.set(endpointId, previous === undefined ? durationMs : previous * 0.8 + durationMs * 0.2);
      const next = lines.get(endpointId)?.shift();
      if (lines.get(endpointId)?.length === 0) lines.delete(endpointId);
      if (next) {
        next.start(next.item);
        return;
      }
      const left = (running.get(endpointId) ?? 1) - 1;
      if (left > 0) running.set(endpointId, left);
      else running.delete(endpointId);
    },
    drain() {
      const items = [...lines.values()].flatMap((line) => line.map((entry) => entry.item));
      lines.clear();
      return items;
    },
  };
}
