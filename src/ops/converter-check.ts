import type { OfficeConverter } from "../convert/office-to-pdf.ts";
import type { ReadinessCheck } from "./health.ts";

/** Ready while at least one warm LibreOffice slot can take a conversion. */
export function officeCheck(office: Pick<OfficeConverter, "slotInfo">): ReadinessCheck {
  return async () => {
    const slots = office.slotInfo();
    if (slots.length === 0) throw new Error("LibreOffice is not started");
    if (slots.every((s) => s.state === "broken")) throw new Error(`every LibreOffice slot is broken: ${slots[0]?.error ?? "unknown"}`);
  };
}
