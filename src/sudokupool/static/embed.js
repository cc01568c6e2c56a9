// The embeddable player (/embed/{id}): one puzzle, the board, the pad and Check, nothing else of the site.
// It reuses the page's modules (the same state shape and moves as app.js) and keeps its own progress per
// puzzle the same way. It never changes the address (it lives in someone else's page) and links out to the
// full player for hints, sharing and other puzzles.

const version = new URL(import.meta.url).search;
const [sudoku, game, boardModule, api, store, keys, labels, messages] = await Promise.all(
  ["sudoku", "game", "board", "api", "store", "keys", "labels", "messages"].map((name) =>
    import(`./${name}.js${version}`),
  ),
);
const { cellName, isSolved, parseGrid, solutionFromPath } = sudoku;
const { Timer, formatTime, loadGame, saveGame } = store;
const { checkMessage, embeddedId, loadFailure, successText } = labels;
const { say, showError, hideError } = messages;

const $ = (id) => document.getElementById(id);
const storage = (() => {
  try {
    return localStorage;
  } catch {
    return null;
  }
})();

const state = {
  record: null,
  givens: [],
  values: [],
  marks: [],
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
};

function render() {
  if (state.record) board.render(state);
}

function select(i, focus = true) {
  state.selected = i;
  board.tabTo(i, focus);
  render();
}

function commit({ valuesChanged }) {
  if (valuesChanged) state.wrong = new Set(game.wrongCells(state.values, state.solution, [...state.wrong]));
  if (!state.solved && isSolved(state.values)) finish();
  save();
  render();
}

function input(digit, forcePencil) {
  const i = state.selected;
  if (!state.record || state.solved) return;
  if (i < 0) return say("Select a cell first.");
  if (state.givens[i]) return say(`${cellName(i)} is a given: it cannot change.`);
  if (forcePencil || state.pencil) {
    if (game.toggleMark(state, i, digit)) commit({ valuesChanged: false });
    return;
  }
  game.enterDigit(state, i, digit);
  commit({ valuesChanged: true });
}

function erase() {
  const i = state.selected;
  if (!state.record || state.solved || i < 0 || state.givens[i]) return;
  if (game.eraseCell(state, i)) commit({ valuesChanged: true });
}

function undo() {
  if (game.undo(state)) commit({ valuesChanged: true });
}

function togglePencil() {
  state.pencil = !state.pencil;
  say(state.pencil ? "Pencil marks on." : "Pencil marks off.");
  render();
}

async function needSolution() {
  if (state.solution) return state.solution;
  const record = state.record;
  try {
    state.solution = parseGrid(await api.fetchSolution(record.canonical_id));
  } catch (error) {
    const fromPath = solutionFromPath(record.puzzle, record.solve_path);
    if (!fromPath) {
      say(`Could not fetch the solution: ${error.message}`);
      return null;
    }
    state.solution = fromPath;
  }
  return state.solution;
}

async function check() {
  if (!state.record || state.solved) return;
  const solution = await needSolution();
  if (!solution) return;
  state.wrong = new Set(game.wrongCells(state.values, solution));
  say(checkMessage(state.wrong.size, state.values.filter((v) => !v).length));
  render();
}

function finish() {
  state.solved = true;
  state.timer.stop();
  tick();
  state.selected = -1;
  const { revealedAll, revealed } = state;
  messages.showSuccess(successText({ revealedAll, revealed: revealed.size, time: formatTime(state.timer.read()) }));
}

function tick() {
  $("timer").textContent = formatTime(state.timer.read());
}

function save() {
  if (!state.record) return;
  const { values, marks, revealed, revealedAll } = state;
  saveGame(storage, state.record.canonical_id, { values, marks, revealed, revealedAll, elapsed: state.timer.read() });
}

function begin(record) {
  const saved = loadGame(storage, record.canonical_id);
  state.record = record;
  state.givens = parseGrid(record.puzzle);
  state.values = saved?.values ?? [...state.givens];
  state.marks = saved?.marks ?? Array(81).fill(0);
  state.revealed = new Set(saved?.revealed ?? []);
  state.revealedAll = saved?.revealedAll ?? false;
  state.timer.reset(saved?.elapsed ?? 0);
  $("status-difficulty").textContent = record.difficulty ?? "?";
  $("status-difficulty").dataset.level = String(record.difficulty_level ?? "");
  const code = $("status-code");
  code.textContent = record.canonical_id;
  code.href = `/p/${encodeURIComponent(record.canonical_id)}`;
  const empty = state.givens.findIndex((v) => !v);
  board.tabTo(empty >= 0 ? empty : 0);
  if (isSolved(state.values)) finish();
  else if (!document.hidden) state.timer.start();
  tick();
  render();
}

async function load(request) {
  $("main").setAttribute("aria-busy", "true");
  try {
    begin(await api.fetchPuzzle(request));
    hideError();
  } catch (error) {
    const { text, label, retry } = loadFailure(error, request, false);
    showError(text, { label, run: () => load(retry) });
  } finally {
    $("main").setAttribute("aria-busy", "false");
  }
}

function onKey(event) {
  const inGrid = Boolean(event.target.closest?.(".grid"));
  const key = keys.keyAction(event, { selected: state.selected, inField: false, inGrid });
  if (!key) return;
  if (key.prevent) event.preventDefault();
  if (key.action === "undo") undo();
  else if (key.action === "erase") erase();
  else if (key.action === "input") input(key.digit, key.pencil);
  else if (key.action === "move") select(game.moveFrom(state.selected, key.dr, key.dc));
  else if (key.action === "pencil") togglePencil();
}

const board = new boardModule.Board({ onSelect: (i) => select(i), onDigit: (d) => input(d, false) });
document.addEventListener("keydown", onKey);
$("pencil").addEventListener("click", togglePencil);
$("erase").addEventListener("click", erase);
$("undo").addEventListener("click", undo);
$("check").addEventListener("click", check);
$("error-retry").addEventListener("click", messages.runErrorAction);
document.addEventListener("visibilitychange", () => {
  if (document.hidden) state.timer.stop();
  else if (state.record && !state.solved) state.timer.start();
});
window.addEventListener("pagehide", save);
setInterval(tick, 500);
setInterval(() => state.record && !state.solved && save(), 5000);
load({ id: embeddedId(location.pathname) ?? "" });
