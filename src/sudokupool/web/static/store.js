// Progress kept per puzzle in this browser only (localStorage), and the game clock that is saved with it.
// The functions take the storage as an argument so they run (and are tested) without a browser.

// Load the grid logic with this file's own ?v= so the page's modules are cached (and replaced) together.
const { parseGrid } = await import(`./sudoku.js${new URL(import.meta.url).search}`);

export const STORE = "sudokupool:game:";
export const KEEP_GAMES = 50;

/** The saved form of a game: the grid as a digit string, so a saved game stays small. */
export function serialiseGame({ values, marks, revealed, revealedAll, elapsed }, savedAt) {
  return JSON.stringify({ values: values.join(""), marks, revealed: [...revealed], revealedAll, elapsed, savedAt });
}

/** A saved game read back (`values`, `marks` or null, `revealed`, `revealedAll`, `elapsed`), or null if unusable. */
export function parseGame(text) {
  try {
    const data = JSON.parse(text ?? "null");
    if (!data || typeof data.values !== "string" || data.values.length !== 81) return null;
    return {
      values: parseGrid(data.values),
      marks: Array.isArray(data.marks) && data.marks.length === 81 ? data.marks.map(Number) : null,
      revealed: Array.isArray(data.revealed) ? data.revealed : [],
      revealedAll: Boolean(data.revealedAll),
      elapsed: Number(data.elapsed) || 0,
    };
  } catch {
    return null;
  }
}

/** Saves a game under its puzzle's code and prunes old games; a full or disabled storage keeps nothing. */
export function saveGame(storage, id, game, now = Date.now()) {
  try {
    storage.setItem(STORE + id, serialiseGame(game, now));
    prune(storage);
  } catch {
    // Storage full or disabled: the game simply is not kept across reloads.
  }
}

/** The saved game of a puzzle (see `parseGame`), or null. */
export function loadGame(storage, id) {
  try {
    return parseGame(storage.getItem(STORE + id));
  } catch {
    return null;
  }
}

/** Keeps the most recent games only, so a long-time player's storage does not grow without end. */
export function prune(storage, keep = KEEP_GAMES) {
  const keys = Object.keys(storage).filter((key) => key.startsWith(STORE));
  if (keys.length <= keep) return;
  const when = (key) => {
    try {
      return JSON.parse(storage.getItem(key) ?? "{}")?.savedAt ?? 0;
    } catch {
      return 0; // unreadable: the first to go
    }
  };
  const oldest = keys.map((key) => [when(key), key]).sort((a, b) => a[0] - b[0]);
  for (const [, key] of oldest.slice(0, keys.length - keep)) storage.removeItem(key);
}

export const LETTERS = "sudokupool:letter-shortcuts";

/** Whether the letter shortcuts (P, H) are on: they are unless turned off in this browser. */
export function lettersOn(storage) {
  try {
    return storage?.getItem(LETTERS) !== "off";
  } catch {
    return true;
  }
}

/** Turns the letter shortcuts on or off for every page of the site in this browser (kept where storage works). */
export function setLetters(storage, on) {
  try {
    if (on) storage?.removeItem(LETTERS);
    else storage?.setItem(LETTERS, "off");
  } catch {
    // Storage full or disabled: the choice holds for this page only.
  }
}

/** The game clock: time played so far, paused while the page is hidden or the puzzle is solved. */
export class Timer {
  constructor(elapsed = 0) {
    this.reset(elapsed);
  }

  /** Stopped, showing `elapsed` milliseconds. */
  reset(elapsed = 0) {
    this.before = elapsed; // milliseconds played before `since`
    this.since = null; // when the clock last started, or null while stopped
  }

  get running() {
    return this.since !== null;
  }

  /** Milliseconds played, counting the current run. */
  read(now = Date.now()) {
    return this.before + (this.since === null ? 0 : now - this.since);
  }

  start(now = Date.now()) {
    if (this.since === null) this.since = now;
  }

  stop(now = Date.now()) {
    this.before = this.read(now);
    this.since = null;
  }
}

/** "03:07", or "1:02:03" from an hour on. */
export function formatTime(ms) {
  const s = Math.floor(ms / 1000);
  const pad = (n) => String(n).padStart(2, "0");
  const hours = Math.floor(s / 3600);
  return hours ? `${hours}:${pad(Math.floor(s / 60) % 60)}:${pad(s % 60)}` : `${pad(Math.floor(s / 60))}:${pad(s % 60)}`;
}

/** Where a set kept for offline play lives. */
export const SET_KEY = "sudokupool:offline-set";

/** Keep `records` (a set) for offline play, replacing any kept before. */
export function keepSet(storage, records) {
  storage.setItem(SET_KEY, JSON.stringify(records));
}

/** The next kept record (taken out of the set), or null when none is left or what is kept cannot be read. */
export function takeFromSet(storage) {
  let records;
  try {
    records = JSON.parse(storage.getItem(SET_KEY) ?? "[]");
  } catch {
    return null;
  }
  if (!Array.isArray(records) || !records.length) return null;
  const [first, ...rest] = records;
  storage.setItem(SET_KEY, JSON.stringify(rest));
  return first;
}

/** How many kept records are left. */
export function setSize(storage) {
  try {
    const records = JSON.parse(storage.getItem(SET_KEY) ?? "[]");
    return Array.isArray(records) ? records.length : 0;
  } catch {
    return 0;
  }
}
