/**
 * JSON made once and handed out many times (a kept page's text or data, in every answer that shows
 * it), with its UTF-8 bytes, made the first time they are asked for: an answer sends them as they are.
 */
export class EncodedOnce {
  readonly json: string;
  #bytes: Buffer | undefined;
  constructor(json: string) {
    this.json = json;
  }
  get bytes(): Buffer {
    return (this.#bytes ??= Buffer.from(this.json));
  }
}

/**
 * A piece of JSON (a result's text or data) as it was put together: what was encoded for this answer
 * alone, as strings, and what was encoded once, as such, so that sending it encodes only the former.
 */
export class JsonPieces {
  readonly pieces: (string | EncodedOnce)[] = [];
  /** The JSON's length in characters, as `toString().length`. */
  length = 0;

  add(piece: string | EncodedOnce): this {
    const last = this.pieces.length - 1;
    const before = this.pieces[last];
    if (typeof piece === 'string' && typeof before === 'string') this.pieces[last] = before + piece;
    else this.pieces.push(piece);
    this.length += typeof piece === 'string' ? piece.length : piece.json.length;
    return this;
  }

  toString(): string {
    return this.pieces.map((piece) => (typeof piece === 'string' ? piece : piece.json)).join('');
  }

  /** The JSON's UTF-8 bytes, in pieces: those encoded once are not encoded again. */
  bytes(): Buffer[] {
    return this.pieces.map((piece) => (typeof piece === 'string' ? Buffer.from(piece) : piece.bytes));
  }
}
