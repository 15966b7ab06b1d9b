import type { Session } from "fastify";
import type { AppSessionsRepo } from "../../store/app-sessions.ts";

type Callback = (err?: unknown) => void;

/** Sessions last this long from sign-in; signing in again starts a new one. */
export const SESSION_LIFETIME_MS = 7 * 24 * 3600_000;

/**
 * @fastify/session's store interface over src/store (the app_sessions table), so a session is
 * ended for good by sign-out and survives restarts and a second server process.
 */
export class StoredSessions {
  constructor(private readonly repo: AppSessionsRepo, private readonly clock: () => number = Date.now) {}

  set(sessionId: string, session: Session, callback: Callback): void {
    const now = this.clock();
    const expires = session.cookie.expires instanceof Date ? session.cookie.expires.getTime() : now + SESSION_LIFETIME_MS;
    this.repo.set(sessionId, session.accountId ?? null, JSON.stringify(session), expires, now).then(() => callback(), callback);
  }

  get(sessionId: string, callback: (err: unknown, result?: Session | null) => void): void {
    this.repo.get(sessionId, this.clock()).then(
      (data) => callback(null, data === undefined ? null : (JSON.parse(data) as Session)),
      (err: unknown) => callback(err),
    );
  }

  destroy(sessionId: string, callback: Callback): void {
    this.repo.destroy(sessionId).then(() => callback(), callback);
  }
}
