/** Where adapters report failures they recover from (a failed handler, a malformed entry). */
export type BusLog = (message: string, error?: unknown) => void;

export const stderrLog: BusLog = (message, error) => {
  if (error === undefined) console.error(`[bus] ${message}`);
  else console.error(`[bus] ${message}:`, error);
};
