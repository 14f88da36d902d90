/**
 * Strings a pure validity check already accepted (the label and annotation keys every write
 * carries, the few timestamps of a second), so the check runs once per distinct string.
 * Bounded: past `max` strings it starts over. Only valid strings are remembered, so a refused
 * value is checked (and refused, with its message) every time.
 */
export class ValidStrings {
  private readonly seen = new Set<string>();

  constructor(private readonly max = 4096) {}

  has(v: string): boolean {
    return this.seen.has(v);
  }

  add(v: string): void {
    if (this.seen.size >= this.max) this.seen.clear();
    this.seen.add(v);
  }
}
