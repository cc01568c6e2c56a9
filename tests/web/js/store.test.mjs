// Saved games and the clock (static/store.js), against an in-memory stand-in for localStorage.
import assert from "node:assert/strict";
import { test } from "node:test";

import {
  KEEP_GAMES,
  LETTERS,
  STORE,
  Timer,
  formatTime,
  lettersOn,
  loadGame,
  parseGame,
  prune,
  saveGame,
  setLetters,
} from "../../../src/sudokupool/web/static/store.js";

/** The part of the Storage interface the store uses; its keys are own properties, as localStorage's are. */
class MemoryStorage {
  getItem(key) {
    return Object.hasOwn(this, key) ? this[key] : null;
  }
  setItem(key, value) {
    this[key] = String(value);
  }
  removeItem(key) {
    delete this[key];
  }
}

const GRID = "53..7....6..195....98....6.8...6...34..8.3..17...2...6.6....28....419..5....8..79";
const game = (overrides = {}) => ({
  values: Array.from(GRID, (ch) => (ch === "." ? 0 : Number(ch))),
  marks: Array(81).fill(0),
  revealed: new Set([4]),
  revealedAll: false,
  elapsed: 61_500,
  ...overrides,
});

test("a saved game reads back as it was", () => {
  const storage = new MemoryStorage();
  saveGame(storage, "ABC", game({ marks: Array(81).fill(6) }), 1000);
  const saved = JSON.parse(storage.getItem(`${STORE}ABC`));
  assert.equal(saved.values, GRID.replaceAll(".", "0"));
  assert.equal(saved.savedAt, 1000);
  assert.deepEqual(loadGame(storage, "ABC"), {
    values: game().values,
    marks: Array(81).fill(6),
    revealed: [4],
    revealedAll: false,
    elapsed: 61_500,
  });
  assert.equal(loadGame(storage, "OTHER"), null);
});

test("an unusable saved game reads as none, and damaged parts fall back", () => {
  assert.equal(parseGame(null), null);
  assert.equal(parseGame("{not json"), null);
  assert.equal(parseGame(JSON.stringify({ values: "123" })), null);
  const odd = parseGame(JSON.stringify({ values: "0".repeat(81), marks: [1, 2], revealed: "x", elapsed: "soon" }));
  assert.deepEqual(odd, { values: Array(81).fill(0), marks: null, revealed: [], revealedAll: false, elapsed: 0 });
});

test("a storage that refuses keeps nothing and throws nothing", () => {
  const full = new MemoryStorage();
  full.setItem = () => {
    throw new Error("QuotaExceededError");
  };
  saveGame(full, "ABC", game());
  assert.equal(loadGame(full, "ABC"), null);
  saveGame(null, "ABC", game()); // localStorage disabled
  assert.equal(loadGame(null, "ABC"), null);
});

test("pruning keeps the most recently saved games and other keys", () => {
  const storage = new MemoryStorage();
  storage.setItem("someone-else", "kept");
  for (let n = 0; n < KEEP_GAMES + 2; n++) saveGame(storage, `G${n}`, game(), 1000 + n);
  storage.setItem(`${STORE}BROKEN`, "{");
  prune(storage);
  const kept = Object.keys(storage).filter((key) => key.startsWith(STORE));
  assert.equal(kept.length, KEEP_GAMES);
  assert.ok(!kept.includes(`${STORE}G0`) && !kept.includes(`${STORE}G1`) && !kept.includes(`${STORE}BROKEN`));
  assert.ok(kept.includes(`${STORE}G${KEEP_GAMES + 1}`));
  assert.equal(storage.getItem("someone-else"), "kept");
});

test("the timer counts only while running", () => {
  const timer = new Timer(5000);
  assert.equal(timer.read(100_000), 5000);
  timer.start(10_000);
  assert.ok(timer.running);
  timer.start(12_000); // already running: the start stays
  assert.equal(timer.read(13_000), 8000);
  timer.stop(14_000);
  assert.ok(!timer.running);
  assert.equal(timer.read(99_000), 9000);
  timer.reset();
  assert.equal(timer.read(99_000), 0);
});

test("times read as minutes and seconds, hours from an hour on", () => {
  assert.equal(formatTime(0), "00:00");
  assert.equal(formatTime(59_999), "00:59");
  assert.equal(formatTime(187_000), "03:07");
  assert.equal(formatTime(3_599_000), "59:59");
  assert.equal(formatTime(3_723_000), "1:02:03");
});

test("the letter shortcuts are on until turned off, and the choice is kept apart from the games", () => {
  const storage = new MemoryStorage();
  assert.equal(lettersOn(storage), true);
  setLetters(storage, false);
  assert.equal(lettersOn(storage), false);
  assert.equal(storage.getItem(LETTERS), "off");
  prune(storage, 0);
  assert.equal(lettersOn(storage), false);
  setLetters(storage, true);
  assert.equal(lettersOn(storage), true);
  assert.equal(storage.getItem(LETTERS), null);
  // Without storage (or where it throws) they stay on, and turning them off does not fail.
  assert.equal(lettersOn(null), true);
  const broken = { getItem: () => { throw new Error("denied"); }, setItem: () => { throw new Error("full"); } };
  assert.equal(lettersOn(broken), true);
  setLetters(broken, false);
});

test("a set kept for offline play is taken one record at a time, then runs out", async () => {
  const { keepSet, takeFromSet, setSize, SET_KEY } = await import("../../../src/sudokupool/web/static/store.js");
  const storage = new MemoryStorage();
  assert.equal(takeFromSet(storage), null);
  keepSet(storage, [{ canonical_id: "A" }, { canonical_id: "B" }]);
  assert.equal(setSize(storage), 2);
  assert.deepEqual(takeFromSet(storage), { canonical_id: "A" });
  assert.deepEqual(takeFromSet(storage), { canonical_id: "B" });
  assert.equal(takeFromSet(storage), null);
  storage.setItem(SET_KEY, "not json");
  assert.equal(takeFromSet(storage), null);
  assert.equal(setSize(storage), 0);
});
