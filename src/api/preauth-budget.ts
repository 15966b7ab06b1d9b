import { addressGroup } from "../ops/client-address.ts";

/**
 * What upload bodies not yet authenticated may hold on disk. A multipart body whose file part
 * comes before `apiKey` and `signature` must be spooled before anyone knows who sent it (the
 * historic API allows that order); without a bound, a few such requests with no valid key fill
 * the disk. Every byte of such a spool is taken from this budget before it is written, per
 * client address and in total, and given back once the request is authenticated or its spool
 * is gone. A request that sends its key, signature and action before the file takes nothing.
 */
export interface PreauthBudgetOptions {
  /** Bytes all unauthenticated spools may hold together. */
  totalBytes: number;
  /** Bytes the unauthenticated spools of one client address (an IPv6 /64) may hold together. */
  perAddressBytes: number;
}

/** Why a take was refused: the shared bounds are full for now, or this request alone is beyond them. */
export type Refusal = "busy" | "alone";

/** One request's share of the budget. */
export interface PreauthHold {
  /** Takes `bytes` more; undefined when granted, else why not (nothing is taken then). */
  take(bytes: number): Refusal | undefined;
  /** Gives back everything taken; later calls do nothing. */
  release(): void;
}

export class PreauthBudget {
  private total = 0;
  private readonly byAddress = new Map<string, number>();

  constructor(private readonly opts: PreauthBudgetOptions) {}

  /** Bytes held now by every unauthenticated spool (tests, benchmark). */
  held(): number {
    return this.total;
  }

  hold(clientAddress: string): PreauthHold {
    const address = addressGroup(clientAddress);
    const alone = Math.min(this.opts.perAddressBytes, this.opts.totalBytes);
    let mine = 0;
    let released = false;
    return {
      take: (bytes) => {
        if (released) throw new Error("take after release");
        if (mine + bytes > alone) return "alone";
        const ofAddress = this.byAddress.get(address) ?? 0;
        if (ofAddress + bytes > this.opts.perAddressBytes || this.total + bytes > this.opts.totalBytes) return "busy";
        mine += bytes;
        this.total += bytes;
        this.byAddress.set(address, ofAddress + bytes);
        return undefined;
      },
      release: () => {
        if (released) return;
        released = true;
        if (mine === 0) return;
        this.total -= mine;
        const left = (this.byAddress.get(address) ?? 0) - mine;
        if (left > 0) this.byAddress.set(address, left);
        else this.byAddress.delete(address);
        mine = 0;
      },
    };
  }
}

// Kept here too for the callers that import it from the budget.
export { addressGroup };
