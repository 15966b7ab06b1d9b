import { invalid } from "./errors.ts";
import { ALL_TIME_FROM, calendarDay, namedRange, STATS_DATE_RANGES, type DayRange, type StatsDateRange } from "./statistics.ts";

/**
 * The period a statistics request asks for (decisions §15), as `svc.documents.stats` and
 * `GET /v2/stats` read it: `dateRange` (`thisMonth`, `lastMonth`, `maxTime`) or `from`/`to`
 * (`YYYY-MM-DD`, UTC days, both included; either may be left out), never both; neither is
 * `thisMonth`. Errors are 201 on the parameter at fault.
 */
export function readStatsRange(get: (name: string) => string | undefined, now: number): DayRange {
  const named = get("dateRange");
  const fromRaw = get("from");
  const toRaw = get("to");
  const hasDates = (fromRaw ?? "") !== "" || (toRaw ?? "") !== "";
  if (named !== undefined && named !== "") {
    if (!(STATS_DATE_RANGES as readonly string[]).includes(named) || hasDates) throw invalid("dateRange");
    return namedRange(named as StatsDateRange, now);
  }
  if (!hasDates) return namedRange("thisMonth", now);
  const today = namedRange("maxTime", now).to;
  const from = fromRaw ? calendarDay(fromRaw) : ALL_TIME_FROM;
  if (from === undefined) throw invalid("from");
  const to = toRaw ? calendarDay(toRaw) : today;
  if (to === undefined || to < from) throw invalid("to");
  return { from, to };
}
