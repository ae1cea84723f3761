// The client's side of the service's backpressure: an answer 503 with Retry-After (an import slot or a pool connection
// waited past its bound, most often on a starved machine) is sent again after it, as a client would. Any other answer,
// and the last try's, count as they are.

/** Sends, and sends again after the Retry-After of a 503 (at most 5 s each time), `again` times at most. */
export async function sentAgainWhenOverloaded<T extends { status: number; headers: Headers }>(send: () => Promise<T>, again: number): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    const answer = await send();
    const retryAfter = Number(answer.headers.get('retry-after'));
    if (answer.status !== 503 || !(retryAfter > 0) || attempt >= again) return answer;
    await new Promise((resolve) => setTimeout(resolve, Math.min(retryAfter, 5) * 1_000));
  }
}
