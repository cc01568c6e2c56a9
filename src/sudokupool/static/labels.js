// What the page says about a cell and a puzzle: the screen-reader label of a cell and the rows of the details card.

// Load the grid logic with this file's own ?v= so the page's modules are cached (and replaced) together.
const { colOf, digitsOf, rowOf } = await import(`./sudoku.js${new URL(import.meta.url).search}`);

/** "Row 1, column 2, given 5", "..., empty, pencil marks 1 4", then any notes ("conflict", ...). */
export function cellLabel(i, v, isGiven, marks, notes) {
  const where = `Row ${rowOf(i) + 1}, column ${colOf(i) + 1}`;
  let what = "empty";
  if (isGiven) what = `given ${v}`;
  else if (v) what = String(v);
  else if (marks) what = `empty, pencil marks ${digitsOf(marks).join(" ")}`;
  return [where, what, ...notes].join(", ");
}

/** The details card of a record as [term, value, aria-label?] rows; `clues` counts the givens when the record does not. */
export function detailRows(record, clues) {
  const rows = [["Difficulty", record.difficulty]];
  if (Number.isInteger(record.stars)) {
    rows.push(["Stars", `${"★".repeat(record.stars)}${"☆".repeat(Math.max(0, 5 - record.stars))}`, `${record.stars} of 5 stars`]);
  }
  if (record.tier) rows.push(["Tier", record.score != null ? `${record.tier} (score ${record.score})` : record.tier]);
  rows.push(["Clues", String(record.clue_count ?? clues)]);
  if (record.symmetry) rows.push(["Symmetry", record.symmetry]);
  if (record.hardest_technique) rows.push(["Hardest technique", record.hardest_technique]);
  if (record.techniques?.length) rows.push(["Techniques", record.techniques.join(", ")]);
  if (Array.isArray(record.solve_path)) rows.push(["Solve path", `${record.solve_path.length} steps`]);
  return rows;
}

/** The puzzle code a page URL asks for: `/p/{code}` or `/?id={code}`, else null. */
export function requestedId(pathname, search) {
  const m = /^\/p\/([^/]+)$/.exec(pathname);
  if (m) return decodeURIComponent(m[1]).trim();
  return new URLSearchParams(search).get("id")?.trim() || null;
}

export const capitalise = (text) => text.charAt(0).toUpperCase() + text.slice(1);
