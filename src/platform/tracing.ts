// OpenTelemetry traces: the SDK and OTLP exporter are loaded (dynamic import) only when an endpoint or exporter is given;
// otherwise the API's no-op tracer answers, so spans made through @opentelemetry/api cost next to nothing.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Attributes, type Span } from '@opentelemetry/api';
import type { SpanExporter } from '@opentelemetry/sdk-trace-base';

const TRACER = 'promotions-service';

/** What crosses a thread or process boundary to continue a trace: the parent span's ids (structured-clone safe). */
export interface TraceCarrier {
  traceId: string;
  spanId: string;
  traceFlags: number;
}

export interface TracingOptions {
  serviceName: string;
  /** OTLP/HTTP base URL (OTEL_EXPORTER_OTLP_ENDPOINT); spans go to `<endpoint>/v1/traces` in batches. */
  endpoint?: string | undefined;
  /** Spans go here at once instead (tests: InMemorySpanExporter). */
  exporter?: SpanExporter;
  /** Fraction of new traces recorded (a caller's sampled trace is always continued). */
  ratio?: number;
}

export interface Tracing {
  /** Sends what is buffered and stops. */
  shutdown(): Promise<void>;
}

/** Starts the SDK when there is somewhere to send spans; undefined (and nothing loaded) otherwise. */
export async function startTracing(options: TracingOptions): Promise<Tracing | undefined> {
  if (!options.endpoint && !options.exporter) return undefined;
  const sdk = await import('@opentelemetry/sdk-trace-node');
  const { resourceFromAttributes } = await import('@opentelemetry/resources');
  let processor;
  if (options.exporter) processor = new sdk.SimpleSpanProcessor(options.exporter);
  else {
    const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-proto');
    processor = new sdk.BatchSpanProcessor(new OTLPTraceExporter({ url: `${options.endpoint!.replace(/\/+$/, '')}/v1/traces` }));
  }
  const ratio = options.ratio ?? 1;
  const provider = new sdk.NodeTracerProvider({
    resource: resourceFromAttributes({ 'service.name': options.serviceName }),
    sampler: new sdk.ParentBasedSampler({ root: ratio >= 1 ? new sdk.AlwaysOnSampler() : new sdk.TraceIdRatioBasedSampler(ratio) }),
    spanProcessors: [processor],
  });
  // The AsyncLocalStorage context manager and the W3C traceparent propagator come with registration: only now.
  provider.register();
  return {
    async shutdown() {
      await provider.shutdown();
      trace.disable();
      context.disable();
      propagation.disable();
    },
  };
}

function tracer() {
  return trace.getTracer(TRACER);
}

/** The span of the current context as a carrier, when one is being recorded (never while tracing is off). */
export function activeTraceCarrier(): TraceCarrier | undefined {
  const span = trace.getSpan(context.active());
  if (!span?.isRecording()) return undefined;
  const { traceId, spanId, traceFlags } = span.spanContext();
  return { traceId, spanId, traceFlags };
}

/** Whether the current context records a span: the cheap test before making one. */
export function isTracing(): boolean {
  return trace.getSpan(context.active())?.isRecording() === true;
}

/**
 * A finished span under a carried parent, with times measured elsewhere (ms since the epoch): how a partition thread's
 * batch joins the trace of the request it served. Returns the new span's carrier, for children.
 */
export function recordSpan(parent: TraceCarrier, name: string, startMs: number, endMs: number, attributes: Attributes = {}): TraceCarrier {
  const parentContext = trace.setSpanContext(ROOT_CONTEXT, { ...parent, isRemote: true });
  const span = tracer().startSpan(name, { startTime: startMs, attributes, kind: SpanKind.INTERNAL }, parentContext);
  span.end(endMs);
  const { traceId, spanId, traceFlags } = span.spanContext();
  return { traceId, spanId, traceFlags };
}

/** Runs `work` in a span of the current trace, ended when it settles; a throw marks the span as an error. */
export async function inSpan<T>(name: string, attributes: Attributes, work: (span: Span) => Promise<T>, options: { kind?: SpanKind; startTime?: number } = {}): Promise<T> {
  return tracer().startActiveSpan(name, { attributes, ...options }, async (span) => {
    try {
      return await work(span);
    } catch (error) {
      span.recordException(error as Error);
      span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error).message });
      throw error;
    } finally {
      span.end();
    }
  });
}

/** The W3C trace headers of the current span, for an outgoing request (none while tracing is off). */
export function traceHeaders(): Record<string, string> {
  const headers: Record<string, string> = {};
  propagation.inject(context.active(), headers);
  return headers;
}

/**
 * Wraps an HTTP server's handler: each request runs in a server span (continuing the caller's trace when it sent a
 * traceparent), ended when the response closes. Only for a process that traces: it costs a span per request.
 */
export function traceRequests(handle: (req: IncomingMessage, res: ServerResponse) => void) {
  return (req: IncomingMessage, res: ServerResponse): void => {
    const parent = propagation.extract(ROOT_CONTEXT, req.headers);
    const method = req.method ?? 'GET';
    const span = tracer().startSpan(method, { kind: SpanKind.SERVER, attributes: { 'http.request.method': method } }, parent);
    res.once('close', () => {
      span.setAttribute('http.response.status_code', res.statusCode);
      if (res.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
    });
    context.with(trace.setSpan(parent, span), () => handle(req, res));
  };
}

export { SpanKind };
