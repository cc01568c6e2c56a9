// The game both players share: the page (app.js) and the embeddable player (embed.js) each make one with
// `createPlayer` and add their own parts around it. It keeps the grid in `state`; every change goes through
// `commit`, which saves, re-renders and checks for a solved grid. It wires what both pages have under the
// same ids (the board and pad, the pencil, erase and undo buttons, the clock, the error banner's button) and
// keeps the progress of each puzzle in this browser. Keys act on the board only: a cell that takes focus
// (by Tab, a click or an arrow) is the selected one, and every move is announced through a live region.

// The modules come with this file's own ?v=, as app.js loads them (a static `import` cannot carry it).
const version = new URL(import.meta.url).search;
const [sudoku, game, boardModule, api, store, keys, labels, messages] = await Promise.all(
  ["sudoku", "game", "board", "api", "store", "keys", "labels", "messages"].map((name) =>
    import(`./${name}.js${version}`),
  ),
);
const { PEERS, cellName, isSolved, parseGrid, solutionFromPath } = sudoku;
const { Timer, formatTime, lettersOn, loadGame, saveGame, setLetters } = store;
const { checkMessage, entryNews, markNews, successText } = labels;
const { announce, say } = messages;

export const $ = (id) => document.getElementById(id);
// Saved games live in localStorage; where it is disabled (reading it throws), nothing is kept.
const storage = (() => {
  try {
    return localStorage;
  } catch {
    return null;
  }
})();

/** The saved progress of puzzle `id` in this browser, or null. */
export const savedGame = (id) => loadGame(storage, id);

/** What a record's progress is kept under: its code, or for a pasted puzzle its grid (the same code names
 *  every layout of a puzzle, and progress in one layout is no use in another). */
export const gameKey = (record) => (record.pasted ? `grid:${record.puzzle}` : record.canonical_id);

/**
 * A player on this page. `texts` holds what it says when no cell is selected and when pencil marks go on
 * and off; `onValuesChanged` runs when a move changes the digits; `solutionError(text)` shows that the
 * solution could not be had; `keyActions` adds actions (by keys.js's name) to the shared ones.
 */
export function createPlayer({ texts, onValuesChanged = () => {}, solutionError, keyActions = {} }) {
  const state = {
    record: null,
    givens: [],
    values: [],
    marks: [], // per cell a bit mask of pencilled digits (bit d for digit d)
    selected: -1,
    pencil: false,
    solution: null,
    wrong: new Set(),
    revealed: new Set(),
    revealedAll: false,
    solved: false,
    timer: new Timer(),
    undo: [],
    hint: null,
    letters: lettersOn(storage),
  };

  function render() {
    if (state.record) board.render(state);
  }

  function select(i, focus = true) {
    state.selected = i;
    board.tabTo(i, focus);
    render();
  }

  /** Puts focus back on the board (cell `i`, else the selected cell, else the one Tab reaches), so that
   *  focus never falls to the page when the control that had it is hidden or disabled. */
  function focusBoard(i = state.selected) {
    if (i >= 0 && !state.solved) select(i);
    else board.tabTo(i >= 0 ? i : board.tabbable(), true);
  }

  /** Whether focus went nowhere, or sits on a control that is now hidden or disabled. */
  function focusLost() {
    const el = document.activeElement;
    return !el || el === document.body || el.disabled || Boolean(el.closest("[hidden]"));
  }

  /** Every change ends here: it forgets stale marks of wrong cells, saves, renders and checks for a win. */
  function commit({ valuesChanged }) {
    if (valuesChanged) {
      state.wrong = new Set(game.wrongCells(state.values, state.solution, [...state.wrong]));
      onValuesChanged();
    }
    if (!state.solved && isSolved(state.values)) finish();
    save();
    render();
  }

  /** A move's news: the status line's earlier message goes, and screen readers hear `news`. */
  function moved(news) {
    say("");
    announce(news);
  }

  function input(digit, forcePencil) {
    const i = state.selected;
    if (!state.record || state.solved) return;
    if (i < 0) return say(texts.selectFirst);
    if (state.givens[i]) return say(`${cellName(i)} is a given: it cannot change.`);
    if (forcePencil || state.pencil) {
      if (game.toggleMark(state, i, digit)) {
        moved(markNews(i, digit, Boolean(state.marks[i] & (1 << digit))));
        commit({ valuesChanged: false });
      }
      return;
    }
    game.enterDigit(state, i, digit);
    moved(entryNews(i, digit, PEERS[i].filter((j) => state.values[j] === digit)));
    commit({ valuesChanged: true });
  }

  function erase() {
    const i = state.selected;
    if (!state.record || state.solved || i < 0 || state.givens[i]) return;
    if (game.eraseCell(state, i)) {
      moved(`${cellName(i)} erased.`);
      commit({ valuesChanged: true });
    }
  }

  function undo() {
    if (game.undo(state)) {
      moved("Undone.");
      commit({ valuesChanged: true });
    }
  }

  function togglePencil() {
    state.pencil = !state.pencil;
    say(state.pencil ? texts.pencilOn : texts.pencilOff);
    render();
  }

  function toggleLetters(on) {
    state.letters = on;
    setLetters(storage, on);
    showLetters();
    say(on ? "Letter shortcuts on: P switches pencil marks, H shows a hint." : "Letter shortcuts off.");
  }

  /** The buttons that have a letter shortcut name it to screen readers while the shortcuts are on. */
  function showLetters() {
    for (const [id, key] of [["pencil", "P"], ["hint", "H"]]) {
      if (state.letters) $(id)?.setAttribute("aria-keyshortcuts", key);
      else $(id)?.removeAttribute("aria-keyshortcuts");
    }
  }

  function startTimer() {
    if (state.record && !state.solved && !document.hidden) state.timer.start();
  }

  function tick() {
    $("timer").textContent = formatTime(state.timer.read());
  }

  async function needSolution({ quiet = false } = {}) {
    if (state.solution) return state.solution;
    const record = state.record;
    try {
      const solution = parseGrid(await api.fetchSolution(record.canonical_id));
      if (state.record === record) state.solution = solution;
    } catch (error) {
      // The solve path spells out the same solution, so a server gone mid-game does not stop the game.
      const fromPath = solutionFromPath(record.puzzle, record.solve_path);
      if (!fromPath) {
        if (!quiet) solutionError(`Could not fetch the solution: ${error.message}`);
        return null;
      }
      if (state.record === record) state.solution = fromPath;
    }
    return state.record === record ? state.solution : null;
  }

  async function check() {
    if (!state.record) return;
    const solution = await needSolution();
    if (!solution) return;
    state.wrong = new Set(game.wrongCells(state.values, solution));
    say(checkMessage(state.wrong.size, state.values.filter((v) => !v).length));
    render();
  }

  /** The grid is solved: the clock stops, the banner says so, and focus stays on the board (on the last
   *  cell played) when the button that had it is now disabled. */
  function finish({ keepFocus = true } = {}) {
    const last = state.selected;
    state.solved = true;
    state.timer.stop();
    tick();
    state.selected = -1;
    const { revealedAll, revealed } = state;
    say("");
    messages.showSuccess(successText({ revealedAll, revealed: revealed.size, time: formatTime(state.timer.read()) }));
    render();
    if (keepFocus && focusLost()) focusBoard(last);
  }

  function save() {
    if (!state.record) return;
    const { values, marks, revealed, revealedAll } = state;
    saveGame(storage, gameKey(state.record), { values, marks, revealed, revealedAll, elapsed: state.timer.read() });
  }

  /** Puts `record` on the board, from its `saved` progress where there is one, and starts the clock. */
  function begin(record, saved) {
    state.record = record;
    state.givens = parseGrid(record.puzzle);
    state.values = saved?.values ?? [...state.givens];
    state.marks = saved?.marks ?? Array(81).fill(0);
    state.revealed = new Set(saved?.revealed ?? []);
    state.revealedAll = saved?.revealedAll ?? false;
    state.solved = false;
    state.timer.reset(saved?.elapsed ?? 0);
    state.wrong = new Set();
    state.undo = [];
    state.selected = -1;
    // A pasted puzzle's answer carries its solution (in its own layout); a pool record's is fetched when needed.
    state.solution = record.solution ? parseGrid(record.solution) : null;
    const empty = state.givens.findIndex((v) => !v);
    board.tabTo(empty >= 0 ? empty : 0);
    if (isSolved(state.values)) finish({ keepFocus: false });
    else startTimer();
    tick();
  }

  const actions = {
    undo,
    erase,
    input: (key) => input(key.digit, key.pencil),
    move: (key) => select(game.moveFrom(key.from ?? state.selected, key.dr, key.dc)),
    pencil: togglePencil,
    ...keyActions,
  };

  function onKey(event) {
    const target = event.target;
    const inField = Boolean(target.closest?.("input, textarea, select"));
    const inGrid = Boolean(target.closest?.(".grid"));
    const inBoard = target === document.body || target === document.documentElement || Boolean(target.closest?.(".board"));
    const key = keys.keyAction(event, { selected: state.selected, inField, inBoard, inGrid, letters: state.letters });
    if (!key) return;
    if (key.prevent) event.preventDefault();
    // Arrows move from the cell that has focus.
    const cell = target.closest?.(".cell");
    if (cell) key.from = Number(cell.dataset.index);
    actions[key.action]?.(key);
  }

  const board = new boardModule.Board({ onSelect: (i) => select(i), onDigit: (d) => input(d, false) });
  // A cell that takes focus (Tab, the skip link, a click) is the selected one: typing acts on it at once.
  $("grid").addEventListener("focusin", (event) => {
    const cell = event.target.closest(".cell");
    const i = cell ? Number(cell.dataset.index) : -1;
    if (i >= 0 && i !== state.selected && state.record && !state.solved) select(i, false);
  });
  document.addEventListener("keydown", onKey);
  showLetters();
  const letters = $("shortcuts");
  if (letters) {
    letters.checked = state.letters;
    letters.addEventListener("change", () => toggleLetters(letters.checked));
  }
  $("pencil").addEventListener("click", togglePencil);
  $("erase").addEventListener("click", erase);
  $("undo").addEventListener("click", undo);
  $("error-retry").addEventListener("click", messages.runErrorAction);
  document.addEventListener("visibilitychange", () => {
    if (document.hidden) state.timer.stop();
    else startTimer();
  });
  window.addEventListener("pagehide", save);
  setInterval(tick, 500);
  // The timer survives a reload: save it now and then, not only on moves.
  setInterval(() => state.record && !state.solved && save(), 5000);

  return { state, render, select, focusBoard, focusLost, commit, needSolution, check, finish, save, begin };
}
