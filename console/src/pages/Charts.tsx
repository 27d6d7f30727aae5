// The game's charts, from GraphQL decisionStats (one SQL aggregate over the events_by_game index): decisions over
// time stacked by status and rejection reason, budget burn against budget and ceiling, daily-cap pressure.
// uPlot draws them (about 20 KiB gzipped, loaded with the game page only); each chart has a text summary too.
import { gql } from '@apollo/client';
import { useEffect, useId, useRef, useState } from 'react';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { client, type Game } from '../api.ts';
import { credits } from '../components.tsx';
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
  // biome-ignore lint/correctness/useExhaustiveDependencies: figures stands for options and data
  useEffect(() => {
    const { options, data } = latest.current;
    if (!ref.current) return;
    const width = Math.max(320, Math.min(900, ref.current.clientWidth || 700));
    plot.current?.destroy();
    plot.current = new uPlot({ ...options, width, height: 220 }, data, ref.current);
    return () => {
      plot.current?.destroy();
      plot.current = undefined;
    };
  }, [figures]);
  return <div ref={ref} className="chart" role="img" aria-label={label} />;
}

/**
 * `live`: the game page's subscription works, so the aggregate is read again when a decision arrives (`received`
 * changes; at most every 2 s) and otherwise every 30 s; without it, every 2 s.
 */
export default function Charts({ game, live, received }: { game: Game; live: boolean; received: number }) {
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
      return result.data?.decisionStats?.buckets ?? [];
    },
    `${game.id}/${windowName}`,
    2000,
    30_000,
    { live, nudge: received },
  );
  const buckets = stats.value ?? [];
  const xs = buckets.map((b) => Date.parse(b.start) / 1000);
  const reasons = [...new Set(buckets.flatMap((b) => b.reasons.map((r) => r.reason)))].sort();
  // Stacked bars: series drawn from the top of the stack down, each at its cumulative height.
  const layers: Array<{ label: string; values: number[] }> = [
    { label: 'accepted', values: buckets.map((b) => b.accepted) },
    ...reasons.map((reason) => ({
      label: `rejected: ${reason}`,
      values: buckets.map((b) => b.reasons.find((r) => r.reason === reason)?.count ?? 0),
    })),
  ];
  const cumulative = layers.map((_, index) =>
    buckets.map((__, i) => layers.slice(0, index + 1).reduce((sum, l) => sum + (l.values[i] ?? 0), 0)),
  );
  const bars = uPlot.paths.bars?.({ size: [0.8, 40] });
  const decisionsOptions: Omit<uPlot.Options, 'width' | 'height'> = {
    scales: { x: { time: true } },
    series: [
      {},
      ...layers
        .map((layer, index) => ({
          label: layer.label,
          stroke: COLORS[index % COLORS.length],
          fill: COLORS[index % COLORS.length],
          paths: bars,
        }))
        .reverse(),
    ],
  };
  const decisionsData = [xs, ...[...cumulative].reverse()] as uPlot.AlignedData;
  // Budget burn: spending through the window, ending at the game's spending now.
  const paidInWindow = buckets.reduce((sum, b) => sum + b.rewardCredits, 0);
  let running = game.spentCredits - paidInWindow;
  const spent = buckets.map((b) => {
    running += b.rewardCredits;
    return running;
  });
  const burnOptions: Omit<uPlot.Options, 'width' | 'height'> = {
    scales: { x: { time: true } },
    series: [
      {},
      { label: 'spent', stroke: '#b00020', width: 2 },
      { label: 'budget', stroke: '#1d6f42', dash: [6, 4] },
      { label: 'ceiling', stroke: '#12355b', dash: [2, 4] },
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
    scales: { x: { time: true }, y: { range: [0, 100] } },
    series: [{}, { label: '% refused by the daily cap', stroke: '#e8710a', width: 2, spanGaps: false }],
  };
  const accepted = buckets.reduce((s, b) => s + b.accepted, 0);
  const rejected = buckets.reduce((s, b) => s + b.rejected, 0);
  const capped = buckets.reduce((s, b) => s + (b.reasons.find((r) => r.reason === 'daily_player_cap')?.count ?? 0), 0);
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
      {stats.error && (
        <p className="error" role="alert">
          <code>{stats.error.code}</code>: {stats.error.message}
        </p>
      )}
      <h3>Decisions over time</h3>
      <p data-testid="decisions-summary">
        {accepted} accepted, {rejected} rejected in the window
        {reasons.length > 0 ? ` (${reasons.join(', ')})` : ''}.
      </p>
      {buckets.length > 0 && (
        <Plot
          label={`Decisions per ${spec.bucket}, stacked by status and reason`}
          options={decisionsOptions}
          data={decisionsData}
        />
      )}
      <h3>Budget burn</h3>
      <p>
        Spent {credits(game.spentCredits)} of budget {credits(game.budgetCredits)} (ceiling{' '}
        {credits(game.maxPayoutCredits)}); {credits(paidInWindow)} paid in the window.
      </p>
      {buckets.length > 0 && <Plot label="Spending against budget and ceiling" options={burnOptions} data={burnData} />}
      <h3>Daily-cap pressure</h3>
      <p>
        {capped} of {accepted + rejected} decisions in the window refused by the daily cap of{' '}
        {credits(game.dailyPlayerCapCredits)} credits per player.
      </p>
      {buckets.length > 0 && (
        <Plot
          label="Share of decisions refused by the daily cap"
          options={capOptions}
          data={[xs, capShare] as uPlot.AlignedData}
        />
      )}
    </div>
  );
}
