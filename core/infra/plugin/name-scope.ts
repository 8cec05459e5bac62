/**
 * Hands out unique names: a name taken already gets the first free
 * `<separator>2`, `<separator>3`, … (operation names in core/services/app-api, and the
 * identifiers the client exporters generate, through svc/plugin).
 */
export class NameScope {
  readonly #taken = new Set<string>();

  constructor(
    reserved: Iterable<string> = [],
    private readonly separator = '_',
  ) {
    for (const name of reserved) this.#taken.add(name);
  }

  has(name: string): boolean {
    return this.#taken.has(name);
  }

  take(wanted: string): string {
    let name = wanted;
    for (let n = 2; this.#taken.has(name); n++) name = `${wanted}${this.separator}${n}`;
    this.#taken.add(name);
    return name;
  }
}
