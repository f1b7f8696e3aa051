import type { ObjectList } from './list-watch.js';

/** Objects per page: client-go's pager default, which the kubelet's reflectors list with. */
export const LIST_PAGE_SIZE = 500;

/**
 * The token of the next page: `continue` as the API server sends it, `_continue` as
 * client-node's models name it.
 */
function continueOf(list: ObjectList<unknown>): string {
  const meta = list.metadata as { continue?: string; _continue?: string } | undefined;
  return meta?.continue ?? meta?._continue ?? '';
}

/**
 * One list made of pages (`limit` and `continue`), as client-go's reflector lists: each page is
 * its own call with its own deadline, so a list of 100,000 pods from a loaded API server is
 * not one answer that cannot arrive within a call's deadline, and each page is parsed apart.
 * Every page of one list comes from the same snapshot, whose resourceVersion the result
 * carries. A continue token that expired (410) fails the list; the reflector lists again.
 *
 * `prepare` turns each object into the form that is kept, page by page as the pages arrive: a
 * list of 100,000 pods prepared in one pass once the last page was in held the event loop for
 * seconds, and kept every page's objects whole until then.
 */
export async function listInPages<T>(
  listPage: (page: { limit: number; _continue?: string }) => Promise<ObjectList<T>>,
  pageSize = LIST_PAGE_SIZE,
  prepare: (item: T) => T = (item) => item,
): Promise<ObjectList<T>> {
  const first = await listPage({ limit: pageSize });
  const items = first.items.map(prepare);
  let next = continueOf(first);
  if (next === '') return { ...first, items };
  while (next !== '') {
    const page = await listPage({ limit: pageSize, _continue: next });
    for (const item of page.items) items.push(prepare(item));
    next = continueOf(page);
  }
  const { resourceVersion } = first.metadata ?? {};
  return { ...first, metadata: resourceVersion !== undefined ? { resourceVersion } : {}, items };
}
