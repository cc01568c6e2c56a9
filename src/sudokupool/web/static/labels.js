// What the page says: the label of a cell, the rows of the details card, and its messages (Check, a win, a
// failed load, the pool's counts).

// Load the grid logic with this file's own ?v= so the page's modules are cached (and replaced) together.
const { cellIndex, cellName, digitsOf } = await import(`./sudoku.js${new URL(import.meta.url).search}`);

/** "r1c2, given 5", "r9c9, empty, pencil marks 1 4", then any notes ("conflict", ...). Cells are named as the
 *  solve path's explanations name them (r1c1 top left to r9c9), everywhere the page names one. */
export function cellLabel(i, v, isGiven, marks, notes) {
  let what = "empty";
  if (isGiven) what = `given ${v}`;
  else if (v) what = String(v);
  else if (marks) what = `empty, pencil marks ${digitsOf(marks).join(" ")}`;
  return [cellName(i), what, ...notes].join(", ");
}

/** What a screen reader hears after a digit goes in cell i: the digit, and the cells it clashes with. */
export function entryNews(i, digit, clashes) {
  const clash = clashes.length ? ` Conflict with ${clashes.map(cellName).join(", ")}.` : "";
  return `${cellName(i)}: ${digit}.${clash}`;
}

/** What a screen reader hears after a pencil mark is toggled in cell i. */
export const markNews = (i, digit, on) => `${cellName(i)}: pencil mark ${digit} ${on ? "added" : "removed"}.`;

/** What a screen reader hears after a hint's step is applied: the digits it placed and the candidates it removed. */
export function stepNews(step) {
  const placed = (step.placements ?? []).map(({ cell, digit }) => `${cell} is ${digit}`);
  const removed = new Map();
  for (const { cell, digit } of step.eliminations ?? []) {
    if (cellIndex(cell) >= 0) removed.set(digit, [...(removed.get(digit) ?? []), cell]);
  }
  const struck = [...removed].map(([digit, cells]) => `${digit} removed from ${cells.join(", ")}`);
  return `Step applied: ${[...placed, ...struck].join("; ") || "nothing to change"}.`;
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

/** A path segment decoded; as it is written when it is no valid percent-encoding (`%ZZ`, a cut UTF-8
 * sequence), so that the page asks for that code and says no puzzle has it, rather than fail as it starts. */
function segment(text) {
  try {
    return decodeURIComponent(text).trim();
  } catch {
    return text.trim();
  }
}

/** The puzzle code a page URL asks for: `/p/{code}` or `/?id={code}`, else null. */
export function requestedId(pathname, search) {
  const m = /^\/p\/([^/]+)$/.exec(pathname);
  if (m) return segment(m[1]);
  return new URLSearchParams(search).get("id")?.trim() || null;
}

/** The puzzle code of an embedded player's path, `/embed/{code}`, or null. */
export function embeddedId(pathname) {
  const m = /^\/embed\/([^/]+)$/.exec(pathname);
  return m ? segment(m[1]) : null;
}

/** The HTML that puts puzzle `id` of the site at `origin` into another page: an iframe of its embedded player. */
export function embedSnippet(origin, id) {
  const code = encodeURIComponent(id);
  return (
    `<iframe src="${origin}/embed/${code}" title="Sudoku puzzle ${code}" width="380" height="540" ` +
    `style="border:0;max-width:100%" loading="lazy"></iframe>`
  );
}

export const capitalise = (text) => text.charAt(0).toUpperCase() + text.slice(1);

/** What Check says: how many entries are wrong, or how many cells are left. */
export function checkMessage(wrong, left) {
  if (wrong) return `${wrong} ${wrong === 1 ? "entry does" : "entries do"} not match the solution (marked in red).`;
  if (left) return `Everything so far is correct; ${left} ${left === 1 ? "cell" : "cells"} to go.`;
  return "Everything is correct.";
}

/** The banner over a finished grid: the time and the cells revealed, or that the solution was revealed. */
export function successText({ revealedAll, revealed, time }) {
  if (revealedAll) return "The solution is revealed. Try another puzzle!";
  const helped = revealed ? ` (with ${revealed} revealed)` : "";
  return `Solved in ${time}${helped}. Well done!`;
}

/** What the page says when `request` (`{id?, difficulty?}`) got no puzzle (`error.status`: the HTTP status,
 *  none if the server did not answer), and what its button does: `{ text, label, retry }`, where `retry`
 *  is the request to load next. `kept`: a game is still on the page. */
export function loadFailure(error, request, kept) {
  const still = kept ? " Your current game is still here." : "";
  if (error.status === 404 && request.id) {
    return {
      text: `No puzzle has the code “${request.id}”. Check the code, or play another puzzle.${still}`,
      label: "Play a random puzzle",
      retry: { push: true },
    };
  }
  if (error.status === 404) {
    return { text: `${capitalise(error.message)}.${still}`, label: "Play any puzzle", retry: { push: true } };
  }
  const text = error.status ? `The server could not give a puzzle (${error.message}).` : error.message;
  return { text: `${text}${still}`, label: "Try again", retry: request };
}

/** The footer line about the pool, from `/api/stats`. */
export function statsLine(stats) {
  const parts = Object.entries(stats.by_difficulty ?? {}).map(([name, n]) => `${n.toLocaleString()} ${name}`);
  return `The pool holds ${stats.total.toLocaleString()} puzzles${parts.length ? `: ${parts.join(" · ")}` : ""}.`;
}

/** Whether the pool has puzzles of `difficulty` (any case; "" is any difficulty). */
export function hasPuzzles(stats, difficulty) {
  if (!difficulty) return true;
  const key = Object.keys(stats.by_difficulty ?? {}).find((k) => k.toLowerCase() === difficulty);
  return Boolean(stats.by_difficulty?.[key]);
}

/** The technique picker's options, from the catalogue: those the pool has puzzles for, each with its count
 *  (`{ value, text }`), in the catalogue's order (roughly easiest first). */
export function techniqueOptions(techniques) {
  return techniques
    .filter((t) => typeof t?.name === "string" && t.puzzles > 0)
    .map((t) => ({ value: t.name, text: `${t.name} (${t.puzzles.toLocaleString()})` }));
}

/** A code as typed or pasted ("htzy-pm3w fe49j") as the API spells it ("HTZYPM3WFE49J"). */
export const puzzleCode = (text) => text.replace(/[\s-]+/g, "").toUpperCase();

/** A pasted puzzle's address on this page, `/?grid=` and its 81 cells ("." for empty), so a reload or a shared
 *  link plays it again. */
export const gridUrl = (grid) => `/?grid=${grid}`;

/** The grid a page address asks for (`?grid=`, as `gridUrl` writes it), or null. */
export const requestedGrid = (search) => new URLSearchParams(search).get("grid")?.trim() || null;

const wait = (seconds) => (seconds ? `in ${seconds} ${seconds === 1 ? "second" : "seconds"}` : "in a moment");

/** What the page says when the engine (a pasted puzzle's grade, its hint) could not answer: `error` is api.js's
 *  ApiError, whose `body` is the API's error object (`status`: why a grid has no answer; `cells`). */
export function engineFailure(error) {
  const body = error.body ?? {};
  const cells = Array.isArray(body.cells) && body.cells.length ? ` (${body.cells.join(", ")})` : "";
  if (body.status === "no-solution") {
    return "This puzzle has no solution: some of its digits cannot all be right. Check what you pasted.";
  }
  if (body.status === "multiple-solutions") {
    return "This puzzle has more than one solution, so it cannot be graded: a proper Sudoku has exactly one. A digit may be missing.";
  }
  if (body.status === "invalid") return `This is not a puzzle that can be played: ${error.message}${cells}.`;
  if (error.status === 422 && cells) return `Your pencil marks${cells} leave out a digit that cell needs: fix them first.`;
  if (error.status === 503) return `The server is busy with other puzzles. Try again ${wait(error.retryAfter)}.`;
  if (error.status === 429) return `You have asked for a lot this minute. Try again ${wait(error.retryAfter)}.`;
  if (!error.status) return error.message;
  return `The server could not answer (${error.message}).`;
}

/** What the page says once a pasted puzzle is on the board. */
export function pastedNews(record) {
  const level = record.difficulty ? `${record.difficulty}, ` : "";
  if (record.in_pool) return `Found in the pool (${level}code ${record.canonical_id}): the puzzle is as you pasted it.`;
  return `Graded: ${level}${record.solve_path?.length ?? 0} steps. Hints come from the server.`;
}
