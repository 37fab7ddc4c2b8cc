/** Cursor-paged lists: await the first page, or iterate every item (or page) across pages. */

/**
 * A list call. `await list` gives the first page as the service sent it;
 * `for await (const item of list)` walks every item, following `next_cursor` until it is
 * absent (a page may be short or empty and still have one); `list.pages()` walks pages.
 */
export class PagePromise<Page extends { next_cursor?: string }, Item> implements PromiseLike<Page>, AsyncIterable<Item> {
  private first: Promise<Page> | undefined;

  constructor(
    private readonly fetchPage: (after: string | undefined) => Promise<Page>,
    private readonly itemsOf: (page: Page) => Item[],
    private readonly start: string | undefined,
  ) {}

  private firstPage(): Promise<Page> {
    return (this.first ??= this.fetchPage(this.start));
  }

  then<A = Page, B = never>(onFulfilled?: ((page: Page) => A | PromiseLike<A>) | null, onRejected?: ((reason: unknown) => B | PromiseLike<B>) | null): Promise<A | B> {
    return this.firstPage().then(onFulfilled, onRejected);
  }

  catch<B = never>(onRejected?: ((reason: unknown) => B | PromiseLike<B>) | null): Promise<Page | B> {
    return this.firstPage().catch(onRejected);
  }

  /** Every page, the first one included. */
  async *pages(): AsyncGenerator<Page> {
    let page = await this.firstPage();
    yield page;
    while (page.next_cursor !== undefined) {
      page = await this.fetchPage(page.next_cursor);
      yield page;
    }
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<Item> {
    for await (const page of this.pages()) yield* this.itemsOf(page);
  }

  /** Every item of every page, in one array. */
  async all(): Promise<Item[]> {
    const items: Item[] = [];
    for await (const item of this) items.push(item);
    return items;
  }
}
