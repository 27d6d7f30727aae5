// The game's charts, from GraphQL decisionStats (one SQL aggregate over the events_by_game index): decisions over
// time stacked by status and rejection reason, budget burn against budget and ceiling, daily-cap pressure.
// uPlot draws them (about 20 KiB gzipped, loaded with the game page only); each chart has a text summary too.
import { gql } from '@apollo/client';
import { type ReactNode, useEffect, useId, useRef, useState } from 'react';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { client, type Game } from '../api.ts';
import { credits, FailureAlert, TableBox } from '../components.tsx';
import { usePoll } from '../poll.ts';

const STATS = gql`
  query ConsoleDecisionStats($gameId: UUID!, $from: DateTime!, $to: DateTime!, $bucket: StatsBucket!) {
    decisionStats(gameId: $gameId, from: $from, to: $to, bucket: $bucket) {
      buckets { start accepted rejected rewardCredits reasons { reason count } }
    }
  }
`;

interface Bucket {
  start: string;
  accepted: number;
  rejected: number;
  rewardCredits: number;
  reasons: Array<{ reason: string; count: number }>;
}

const WINDOWS = {
  hour: { label: 'Last hour, per minute', bucket: 'minute', ms: 60_000, count: 60 },
  day: { label: 'Last 24 hours, per hour', bucket: 'hour', ms: 3_600_000, count: 24 },
  month: { label: 'Last 30 days, per day', bucket: 'day', ms: 86_400_000, count: 30 },
} as const;
type WindowName = keyof typeof WINDOWS;

const COLORS = ['#1d6f42', '#b00020', '#e8710a', '#7b1fa2', '#0b57d0', '#795548', '#00838f', '#c2185b', '#546e7a'];

/** The axes' font, also what their width is measured with. */
export const AXIS_FONT = '12px system-ui, sans-serif';

/** What each rejection reason means, in a sentence's end (CONTRACT section 7). */
const REASONS: Record<string, string> = {
  daily_player_cap: "the player reached the game's daily cap",
  game_budget_exhausted: "the game's budget was used up",
  game_paused: 'the game was paused',
  game_payout_ceiling: "the game's ceiling was reached",
  player_not_linked: 'the player is not linked to a platform account yet',
  project_budget_exhausted: "the project's budget was used up",
  project_payout_ceiling: "the project's ceiling was reached",
  rate_limited: 'more events of the game in one minute than allowed',
  timestamp_out_of_window: 'occurredAt was more than 5 minutes from the time of receipt',
  unknown_or_inactive_rule: 'no active rule rewards this event type',
  user_unavailable: 'the linked account is disabled',
};

/**
 * A y axis whose width fits its widest label (uPlot's fixed default clips "10,000" to "0,000"), with the figures
 * grouped by thousands.
 */
function yAxis(format: (value: number) => string = (v) => v.toLocaleString('en-US')): uPlot.Axis {
  return {
    font: AXIS_FONT,
    values: (_self, splits) => splits.map((v) => (v == null ? '' : format(v))),
    size: (self, values, axisIndex, cycle) => {
      const axis = self.axes[axisIndex] as uPlot.Axis & { _size?: number };
      if (cycle > 1 && axis._size) return axis._size;
      const font = axis.font as unknown;
      self.ctx.font = Array.isArray(font) ? String(font[0]) : AXIS_FONT;
      const widest = Math.max(0, ...(values ?? []).map((v) => self.ctx.measureText(String(v)).width));
      const ticks = typeof axis.ticks?.size === 'number' ? axis.ticks.size : 10;
      const gap = typeof axis.gap === 'number' ? axis.gap : 5;
      return Math.ceil(widest / (window.devicePixelRatio || 1) + ticks + gap + 6);
    },
  };
}

const xAxis: uPlot.Axis = { font: AXIS_FONT };

function Plot({
  label,
  options,
  data,
}: {
  label: string;
  options: Omit<uPlot.Options, 'width' | 'height'>;
  data: uPlot.AlignedData;
}) {
  const ref = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | undefined>(undefined);
  const latest = useRef({ options, data });
  latest.current = { options, data };
  // Redrawn when the figures change, not on every render.
  const figures = JSON.stringify([data, options.series.map((s) => s.label)]);
  const widthOf = (element: HTMLElement) => Math.max(240, Math.min(900, element.clientWidth || 700));
  // biome-ignore lint/correctness/useExhaustiveDependencies: figures stands for options and data
  useEffect(() => {
    const { options, data } = latest.current;
    const element = ref.current;
    if (!element) return;
    plot.current?.destroy();
    plot.current = new uPlot(
      { ...options, legend: { show: false }, width: widthOf(element), height: 220 },
      data,
      element,
    );
    // The chart follows its box's width (a phone turned, a window resized).
    const observer = new ResizeObserver(() => {
      const width = widthOf(element);
      if (plot.current && plot.current.width !== width) plot.current.setSize({ width, height: 220 });
    });
    observer.observe(element);
    return () => {
      observer.disconnect();
      plot.current?.destroy();
      plot.current = undefined;
    };
  }, [figures]);
  return <div ref={ref} className="chart" role="img" aria-label={label} />;
}

/** The legend with the window's real figures (uPlot's own shows only the value under the cursor). */
function Legend({ label, items }: { label: string; items: Array<{ color: string; dash?: boolean; text: ReactNode }> }) {
  return (
    <ul className="legend" aria-label={label}>
      {items.map((item, index) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: a fixed list per render
        <li key={index}>
          <span
            className={item.dash ? 'swatch swatch-dash' : 'swatch'}
            style={{ backgroundColor: item.dash ? undefined : item.color, borderColor: item.color }}
            aria-hidden="true"
          />{' '}
          {item.text}
        </li>
      ))}
    </ul>
  );
}

/**
 * `live`: the game page's subscription works, so the aggregate is read again when a decision arrives (`received`
 * changes; at most every 2 s) and otherwise every 30 s; without it, every 2 s. `empty`: what to do when the window
 * has no decision (send an event: the command for this game).
 */
export default function Charts({
  game,
  live,
  received,
  empty,
}: {
  game: Game;
  live: boolean;
  received: number;
  empty: ReactNode;
}) {
  const id = useId();
  const [windowName, setWindowName] = useState<WindowName>('hour');
  const spec = WINDOWS[windowName];
  const stats = usePoll(
    async () => {
      const to = Math.ceil((Date.now() + 1) / spec.ms) * spec.ms;
      const from = to - spec.count * spec.ms;
      const result = await client.query<{ decisionStats: { buckets: Bucket[] } | null }>({
        query: STATS,
        variables: {
          gameId: game.id,
          from: new Date(from).toISOString(),
          to: new Date(to).toISOString(),
          bucket: spec.bucket,
        },
        fetchPolicy: 'network-only',
      });
      if (result.error) throw result.error;
      return { windowName, buckets: result.data?.decisionStats?.buckets ?? [] };
    },
    `${game.id}/${windowName}`,
    2000,
    30_000,
    { live, nudge: received },
  );
  // The figures of the window shown (not those of the window chosen before, while the new one loads).
  const current = stats.value?.windowName === windowName ? stats.value.buckets : undefined;
  const buckets = current ?? [];
  const xs = buckets.map((b) => Date.parse(b.start) / 1000);
  // Each bar stands at its bucket's start: the x scale reaches half a bucket past both ends, so that the first and
  // the current (last) buckets are drawn whole.
  const half = spec.ms / 2000;
  const xScale: uPlot.Scale = {
    time: true,
    range: (_self, min, max) => [(xs[0] ?? min) - half, (xs.at(-1) ?? max) + half],
  };
  const reasonCounts = new Map<string, number>();
  for (const b of buckets)
    for (const r of b.reasons) reasonCounts.set(r.reason, (reasonCounts.get(r.reason) ?? 0) + r.count);
  const reasons = [...reasonCounts.keys()].sort();
  // Stacked bars: series drawn from the top of the stack down, each at its cumulative height.
  const layers: Array<{ label: string; values: number[]; color: string }> = [
    { label: 'accepted', values: buckets.map((b) => b.accepted), color: COLORS[0]! },
    ...reasons.map((reason, index) => ({
      label: `rejected: ${reason}`,
      values: buckets.map((b) => b.reasons.find((r) => r.reason === reason)?.count ?? 0),
      color: COLORS[(index + 1) % COLORS.length]!,
    })),
  ];
  const cumulative = layers.map((_, index) =>
    buckets.map((__, i) => layers.slice(0, index + 1).reduce((sum, l) => sum + (l.values[i] ?? 0), 0)),
  );
  const bars = uPlot.paths.bars?.({ size: [0.8, 40] });
  const decisionsOptions: Omit<uPlot.Options, 'width' | 'height'> = {
    scales: { x: xScale, y: { range: (_self, _min, max) => [0, Math.max(1, max)] } },
    axes: [xAxis, yAxis()],
    series: [
      {},
      ...layers
        .map((layer) => ({
          label: layer.label,
          stroke: layer.color,
          fill: layer.color,
          paths: bars,
          points: { show: false },
        }))
        .reverse(),
    ],
  };
  // An empty bucket draws no bar (a bar of height 0 would still draw its outline).
  const decisionsData = [
    xs,
    ...[...cumulative].reverse().map((values) => values.map((v) => (v === 0 ? null : v))),
  ] as uPlot.AlignedData;
  // Budget burn: spending through the window, ending at the game's spending now.
  const paidInWindow = buckets.reduce((sum, b) => sum + b.rewardCredits, 0);
  let running = game.spentCredits - paidInWindow;
  const spent = buckets.map((b) => {
    running += b.rewardCredits;
    return running;
  });
  const burnOptions: Omit<uPlot.Options, 'width' | 'height'> = {
    scales: { x: xScale, y: { range: (_self, _min, max) => [0, Math.max(1, max) * 1.05] } },
    axes: [xAxis, yAxis()],
    series: [
      {},
      { label: 'spent', stroke: '#b00020', width: 2, points: { show: false } },
      { label: 'budget', stroke: '#1d6f42', dash: [6, 4], points: { show: false } },
      { label: 'ceiling', stroke: '#12355b', dash: [2, 4], points: { show: false } },
    ],
  };
  const burnData = [
    xs,
    spent,
    xs.map(() => game.budgetCredits),
    xs.map(() => game.maxPayoutCredits),
  ] as uPlot.AlignedData;
  // Daily-cap pressure: the share of decisions refused by the daily per-player cap.
  const capShare = buckets.map((b) => {
    const total = b.accepted + b.rejected;
    const capped = b.reasons.find((r) => r.reason === 'daily_player_cap')?.count ?? 0;
    return total === 0 ? null : Math.round((capped / total) * 100);
  });
  const capOptions: Omit<uPlot.Options, 'width' | 'height'> = {
    scales: { x: xScale, y: { range: [0, 100] } },
    axes: [xAxis, yAxis((v) => `${v} %`)],
    series: [{}, { label: '% refused by the daily cap', stroke: '#e8710a', width: 2, spanGaps: false }],
  };
  const accepted = buckets.reduce((s, b) => s + b.accepted, 0);
  const rejected = buckets.reduce((s, b) => s + b.rejected, 0);
  const capped = reasonCounts.get('daily_player_cap') ?? 0;
  const total = accepted + rejected;
  const none = current !== undefined && total === 0;
  const windowText = spec.label.replace(/,.*/, '').toLowerCase();
  return (
    <div className="charts">
      <div className="field">
        <label htmlFor={`${id}-window`}>Chart window</label>
        <select id={`${id}-window`} value={windowName} onChange={(e) => setWindowName(e.target.value as WindowName)}>
          {Object.entries(WINDOWS).map(([name, w]) => (
            <option key={name} value={name}>
              {w.label}
            </option>
          ))}
        </select>
      </div>
      {stats.error && <FailureAlert failure={stats.error} />}
      <h3>Decisions over time</h3>
      <p data-testid="decisions-summary">
        {accepted} accepted, {rejected} rejected in the window
        {reasons.length > 0 ? ` (${reasons.join(', ')})` : ''}.
      </p>
      {none ? (
        <div className="empty" data-testid="charts-empty">
          <p>
            <strong>No decisions in the {windowText}.</strong> The charts fill in as your game server sends events: send
            one and it shows here within seconds.
          </p>
          {empty}
        </div>
      ) : (
        buckets.length > 0 && (
          <>
            <Plot
              label={`Decisions per ${spec.bucket}, stacked by status and reason`}
              options={decisionsOptions}
              data={decisionsData}
            />
            <Legend
              label="Decisions in the window"
              items={layers.map((layer) => ({
                color: layer.color,
                text: (
                  <>
                    {layer.label}: <strong>{credits(layer.values.reduce((a, b) => a + b, 0))}</strong>
                  </>
                ),
              }))}
            />
          </>
        )
      )}
      {reasons.length > 0 && (
        <TableBox label="Rejection reasons">
          <table aria-label="Rejection reasons">
            <caption>Rejection reasons in the window</caption>
            <thead>
              <tr>
                <th scope="col">Reason</th>
                <th scope="col">Decisions</th>
                <th scope="col">Share</th>
                <th scope="col">Meaning</th>
              </tr>
            </thead>
            <tbody>
              {[...reasonCounts.entries()]
                .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
                .map(([reason, count]) => (
                  <tr key={reason}>
                    <td>
                      <code>{reason}</code>
                    </td>
                    <td>{credits(count)}</td>
                    <td>{Math.round((count / total) * 100)} %</td>
                    <td>{REASONS[reason] ?? ''}</td>
                  </tr>
                ))}
            </tbody>
          </table>
        </TableBox>
      )}
      <h3>Budget burn</h3>
      <p>
        Spent {credits(game.spentCredits)} of budget {credits(game.budgetCredits)} (ceiling{' '}
        {credits(game.maxPayoutCredits)}); {credits(paidInWindow)} paid in the window.
      </p>
      {buckets.length > 0 && (
        <>
          <Plot label="Spending against budget and ceiling" options={burnOptions} data={burnData} />
          <Legend
            label="Budget burn"
            items={[
              {
                color: '#b00020',
                text: (
                  <>
                    spent: <strong>{credits(game.spentCredits)}</strong> now ({credits(paidInWindow)} in the window)
                  </>
                ),
              },
              {
                color: '#1d6f42',
                dash: true,
                text: (
                  <>
                    budget: <strong>{credits(game.budgetCredits)}</strong>
                  </>
                ),
              },
              {
                color: '#12355b',
                dash: true,
                text: (
                  <>
                    ceiling: <strong>{credits(game.maxPayoutCredits)}</strong>
                  </>
                ),
              },
            ]}
          />
        </>
      )}
      <h3>Daily-cap pressure</h3>
      <p>
        {capped} of {total} decisions in the window refused by the daily cap of {credits(game.dailyPlayerCapCredits)}{' '}
        credits per player.
      </p>
      {buckets.length > 0 && !none && (
        <>
          <Plot
            label="Share of decisions refused by the daily cap"
            options={capOptions}
            data={[xs, capShare] as uPlot.AlignedData}
          />
          <Legend
            label="Daily-cap pressure"
            items={[
              {
                color: '#e8710a',
                text: (
                  <>
                    refused by the daily cap: <strong>{total === 0 ? 0 : Math.round((capped / total) * 100)} %</strong>{' '}
                    ({capped} of {total})
                  </>
                ),
              },
            ]}
          />
        </>
      )}
    </div>
  );
}
