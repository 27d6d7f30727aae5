// The availability figures of a phase (docs/reliability.md, "Availability"): printed and recorded, never asserted.
import { rowKey, type StoredRow } from './checks.ts';
import type { SentRequest } from './load.ts';

export interface Availability {
  /** Share of the phase's requests answered 200 or 409 (a decision was given). */
  phaseShare: number | null;
  /** The same share among the requests sent while the fault lasted. */
  faultShare: number | null;
  /** From the fault's end to the answer of the first request sent after it that was answered 200. */
  firstOkAfterEndMs: number | null;
  /**
   * Stored decisions whose transaction started (created_at) after the deadline of every copy of the event sent
   * before it: work done for requests already answered 503 or given up.
   */
  staleTransactions: number;
  /** The latest of them: how long after the last such deadline its transaction started. */
  staleLatestMs: number | null;
}

const decided = (r: SentRequest) => r.answer?.status === 200 || r.answer?.status === 409;

export function availabilityOf(
  requests: SentRequest[],
  rows: Map<string, StoredRow>,
  faultAt: number,
  endedAt: number,
  deadlineMs: number,
): Availability {
  const share = (list: SentRequest[]) => (list.length === 0 ? null : list.filter(decided).length / list.length);
  const during = requests.filter((r) => r.sentAt >= faultAt && r.sentAt < endedAt);
  const firstOk = requests
    .filter((r) => r.sentAt >= endedAt && r.answer?.status === 200)
    .reduce<number | undefined>((first, r) => Math.min(first ?? r.answeredAt!, r.answeredAt!), undefined);
  const copies = new Map<string, SentRequest[]>();
  for (const r of requests) {
    const key = `${rowKey(r.copy.gameId, r.copy.eventId)}/${r.copy.hash}`;
    copies.set(key, [...(copies.get(key) ?? []), r]);
  }
  let staleTransactions = 0;
  let staleLatestMs: number | null = null;
  for (const list of copies.values()) {
    const first = list[0]!;
    const row = rows.get(rowKey(first.copy.gameId, first.copy.eventId));
    if (!row || row.hash !== first.copy.hash) continue;
    const sentBefore = list.filter((r) => r.sentAt <= row.createdAtMs);
    if (sentBefore.length === 0) continue;
    const lastDeadline = Math.max(...sentBefore.map((r) => r.sentAt + deadlineMs));
    if (row.createdAtMs > lastDeadline) {
      staleTransactions++;
      staleLatestMs = Math.max(staleLatestMs ?? 0, row.createdAtMs - lastDeadline);
    }
  }
  return {
    phaseShare: share(requests),
    faultShare: share(during),
    firstOkAfterEndMs: firstOk === undefined ? null : Math.max(0, firstOk - endedAt),
    staleTransactions,
    staleLatestMs,
  };
}
