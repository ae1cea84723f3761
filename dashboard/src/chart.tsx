// A time chart over uPlot: one x axis of instants, series drawn as bars or lines, sized to its container.
// Only the Insights page imports it, and that page is loaded on demand, so uPlot stays out of the first bundle.
import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

export interface ChartSeries {
  label: string;
  values: (number | null)[];
  color: string;
  style: 'bars' | 'line';
}

export const PALETTE = ['#4f46e5', '#0f7b4f', '#d97706', '#b42318', '#0891b2', '#7c3aed'];

/** Every figure charted is a whole number (counts, cents, points): the y axis steps by 1, 2, 5, 10, 20, 50, … only. */
const WHOLE_STEPS = Array.from({ length: 16 }, (_, e) => [1, 2, 5].map((m) => m * 10 ** e)).flat();

export function TimeChart(props: {
  label: string;
  /** Instants, in seconds since the epoch. */
  x: number[];
  series: ChartSeries[];
  /** How to print a y value (axis and legend). */
  format?: (value: number) => string;
  height?: number;
}) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const element = box.current;
    if (!element) return;
    const format = props.format ?? ((v: number) => String(v));
    const bars = uPlot.paths.bars!({ size: [0.6, 48], gap: 2 });
    const step = props.x.length > 1 ? props.x[1]! - props.x[0]! : 86_400;
    const chart = new uPlot(
      {
        width: element.clientWidth || 600,
        height: props.height ?? 220,
        legend: { show: true },
        cursor: { drag: { x: false, y: false } },
        // Half a step of room on either side, so the first and last bars are drawn whole.
        scales: { x: { time: true, range: (_u, min, max) => [min - step / 2, max + step / 2] }, y: { range: (_u, _min, max) => [0, max > 0 ? max * 1.1 : 1] } },
        axes: [
          { stroke: '#687085', grid: { stroke: '#eef0f4' } },
          { stroke: '#687085', grid: { stroke: '#eef0f4' }, size: 64, incrs: WHOLE_STEPS, values: (_u, splits) => splits.map((v) => format(v)) },
        ],
        series: [
          {},
          ...props.series.map((s) => ({
            label: s.label,
            stroke: s.color,
            width: s.style === 'line' ? 2 : 0,
            fill: s.style === 'bars' ? s.color + 'cc' : undefined,
            paths: s.style === 'bars' ? bars : undefined,
            points: { show: s.style === 'line' && props.x.length <= 14 },
            value: (_u: uPlot, v: number | null) => (v === null ? '—' : format(v)),
          })),
        ],
      },
      [props.x, ...props.series.map((s) => s.values)],
      element,
    );
    const resize = new ResizeObserver(() => chart.setSize({ width: element.clientWidth, height: props.height ?? 220 }));
    resize.observe(element);
    return () => {
      resize.disconnect();
      chart.destroy();
    };
  }, [props.x, props.series]);
  return <div class="chart" ref={box} role="img" aria-label={props.label} />;
}
