/** The value of one sample line of Prometheus' text format, by its name and exact labels; undefined when absent. */
export function sample(text: string, name: string, labels: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${name}{${labels}} `));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}

/** `GET /metrics` on svc's own port, with the operator's token. */
export async function scrape(url: string, ownerToken: string): Promise<string> {
  const answer = await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${ownerToken}` } });
  if (answer.status !== 200) throw new Error(`GET /metrics answered ${answer.status}: ${await answer.text()}`);
  return answer.text();
}
