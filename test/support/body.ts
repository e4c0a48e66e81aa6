/** A response body's chunks as they arrive (Bun's ReadableStream is async-iterable); no body at all is an error. */
export async function* chunks(res: Response): AsyncGenerator<Uint8Array> {
  if (!res.body) throw new Error(`the ${res.status} answer has no body`)
  yield* res.body
}
