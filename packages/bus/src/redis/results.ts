/** Pipelines and MULTI report errors per command instead of rejecting. */
export function throwFirstError(results: [Error | null, unknown][] | null): void {
  for (const [error] of results ?? []) if (error) throw error;
}
