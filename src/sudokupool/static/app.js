// The page that plays the pool: it keeps the game's state and wires the buttons, keys and panels to it.
// Plain ES modules, no build step. Views: board.js draws the grid and the pad, panels.js the hint, details
// and share cards, messages.js the status line and the banners. Pure logic, unit-tested, no DOM:
// sudoku.js (grid and hints), game.js (the moves and undo), api.js (the unversioned API), store.js (saved
// games and the clock), keys.js (key presses to actions), labels.js and hints.js (what the page says).
// The grid lives in `state`; every change goes through `commit`, which saves, re-renders and checks for
// a solved grid. The board derives every class and label from `state`, so the DOM never holds game state.

// Load the modules with this file's own ?v= so they are cached (and replaced) together with it. A static
// `import` cannot carry the version, and an unversioned URL would be revalidated on every visit.
const version = new URL(import.meta.url).search;
const [sudoku, game, boardModule, api, store, keys, labels, hints, panels, messages] = await Promise.all(
  ["sudoku", "game", "board", "api", "store", "keys", "labels", "hints", "panels", "messages"].map((name) =>
    import(`./${name}.js${version}`),
  ),
);
const { cellName, isSolved, nextHint, parseGrid, solutionFromPath } = sudoku;
const { Board } = boardModule;
const { fetchPuzzle, fetchSolution, fetchStats, fetchTechniques, imageUrl, printUrl } = api;
const { Timer, formatTime, loadGame, saveGame } = store;
const { checkMessage, detailRows, hasPuzzles, loadFailure, puzzleCode, requestedId, statsLine, successText } = labels;
const { embedSnippet, techniqueOptions } = labels;
const { hintView } = hints;
const { say, showError, hideError, confirmFirst } = messages;

const $ = (id) => document.getElementById(id);
// Saved games live in localStorage; where it is disabled (reading it throws), nothing is kept.
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
  hintSeen: new Set(), // removal-only steps already shown
  lastRequest: null,
};

// ---- the board -------------------------------------------------------------------------------------

function select(i, focus = true) {
  state.selected = i;
  board.tabTo(i, focus);
  render();
}

function render() {
  if (state.record) board.render(state);
}

// ---- playing ---------------------------------------------------------------------------------------

/** Every change ends here: it forgets stale marks of wrong cells, saves, renders and checks for a win. */
function commit({ valuesChanged }) {
  if (valuesChanged) {
    state.wrong = new Set(game.wrongCells(state.values, state.solution, [...state.wrong]));
    hideHint();
  }
  if (!state.solved && isSolved(state.values)) finish();
  save();
  render();
}

function input(digit, forcePencil) {
  const i = state.selected;
  if (!state.record || state.solved) return;
  if (i < 0) return say("Select a cell first (click it, or move there with the arrow keys).");
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

function move(dr, dc) {
  select(game.moveFrom(state.selected, dr, dc));
}

function togglePencil() {
  state.pencil = !state.pencil;
  say(state.pencil ? "Pencil marks on: digits toggle small marks." : "Pencil marks off: digits fill cells.");
  render();
}

function autoMarks() {
  if (!state.record || state.solved) return;
  game.fillMarks(state);
  say("Every empty cell now shows its candidates.");
  commit({ valuesChanged: false });
}

// ---- timer -----------------------------------------------------------------------------------------

function startTimer() {
  if (!state.solved && !document.hidden) state.timer.start();
}

function stopTimer() {
  state.timer.stop();
}

function tick() {
  $("timer").textContent = formatTime(state.timer.read());
}

// ---- the solution: check, reveal, win ----------------------------------------------------------------

async function needSolution({ quiet = false } = {}) {
  if (state.solution) return state.solution;
  const record = state.record;
  try {
    const solution = parseGrid(await fetchSolution(record.canonical_id));
    if (state.record === record) state.solution = solution;
  } catch (error) {
    // The solve path spells out the same solution, so a server gone mid-game does not stop the game.
    const fromPath = solutionFromPath(record.puzzle, record.solve_path);
    if (!fromPath) {
      if (quiet) return null;
      showError(`Could not fetch the solution: ${error.message}`, { label: "Try again", run: hideError });
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

async function revealCell() {
  const i = state.selected;
  if (!state.record || state.solved) return;
  if (i < 0 || state.givens[i]) return say("Select an empty or entered cell to reveal.");
  const solution = await needSolution();
  if (!solution) return;
  game.revealCell(state, i, solution);
  say(`${cellName(i)} is ${solution[i]}.`);
  commit({ valuesChanged: true });
}

async function revealAll() {
  if (!state.record || state.solved) return;
  const solution = await needSolution();
  if (!solution) return;
  game.revealAll(state, solution);
  state.revealedAll = true;
  commit({ valuesChanged: true });
}

function restart() {
  if (!state.record) return;
  begin(state.record, null);
  say("Started again.");
}

function finish() {
  state.solved = true;
  stopTimer();
  tick();
  state.selected = -1;
  const { revealedAll, revealed } = state;
  messages.showSuccess(successText({ revealedAll, revealed: revealed.size, time: formatTime(state.timer.read()) }));
}

// ---- hints -----------------------------------------------------------------------------------------

function showHint() {
  const record = state.record;
  if (!record || state.solved) return;
  const hint = nextHint(record.puzzle, state.values, state.marks, record.solve_path, state.solution, state.hintSeen);
  state.hint = hint;
  if (hint.kind === "step" && !hint.step.placements?.length) state.hintSeen.add(hint.index);
  if (hint.kind === "mistake") state.wrong = new Set(hint.cells);
  panels.showHint(hintView(hint, record.solve_path?.length ?? 0));
  render();
}

function hideHint() {
  state.hint = null;
  panels.hideHint();
}

function applyHint() {
  const hint = state.hint;
  if (hint?.kind !== "step" || state.solved) return;
  game.followStep(state, hint.step);
  commit({ valuesChanged: true });
}

// ---- loading a puzzle ------------------------------------------------------------------------------

/** Load the puzzle `request` asks for (api.js's `puzzlePath`); true when it is on the board. */
async function load(request) {
  state.lastRequest = request;
  $("main").setAttribute("aria-busy", "true");
  document.body.classList.add("loading");
  try {
    const record = await fetchPuzzle(request);
    hideError();
    begin(record, loadGame(storage, record.canonical_id));
    const url = `/p/${record.canonical_id}`;
    if (location.pathname !== url || location.search) {
      history[request.push ? "pushState" : "replaceState"]({ id: record.canonical_id }, "", url);
    }
    return true;
  } catch (error) {
    reportLoadError(error, request);
    return false;
  } finally {
    $("main").setAttribute("aria-busy", "false");
    document.body.classList.remove("loading");
  }
}

function reportLoadError(error, request) {
  const { text, label, retry } = loadFailure(error, request, Boolean(state.record));
  showError(text, { label, run: () => load(retry) });
  document.body.classList.toggle("empty", !state.record);
}

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
  state.hintSeen = new Set();
  state.selected = -1;
  state.solution = null;
  hideHint();
  say("");
  messages.hideSuccess();
  document.body.classList.remove("empty");
  board.tabTo(state.givens.findIndex((v) => !v) >= 0 ? state.givens.findIndex((v) => !v) : 0);
  if (isSolved(state.values)) finish();
  else startTimer();
  tick();
  panels.showDetails(record, detailRows(record, state.givens.filter(Boolean).length));
  const id = record.canonical_id;
  panels.showShare(id, { puzzle: imageUrl(id, "puzzle"), solution: imageUrl(id, "solution") });
  const snippet = embedSnippet(location.origin, id);
  panels.showEmbed(id, { snippet, svg: imageUrl(id, "puzzle", "svg"), print: printUrl(id) });
  save();
  render();
  // Fetched now so Check and Reveal still work if the server goes away mid-game.
  needSolution({ quiet: true });
}

async function copyLink() {
  say((await panels.copyLink()) ? "Link copied." : "Select the link and copy it.");
}

async function copyEmbed() {
  say((await panels.copyEmbed()) ? "Embed HTML copied: paste it into your page." : "Select the HTML and copy it.");
}

// ---- saving progress (per puzzle, in this browser only) ----------------------------------------------

function save() {
  if (!state.record) return;
  const { values, marks, revealed, revealedAll } = state;
  saveGame(storage, state.record.canonical_id, { values, marks, revealed, revealedAll, elapsed: state.timer.read() });
}

// ---- wiring ----------------------------------------------------------------------------------------

function onKey(event) {
  const inField = Boolean(event.target.closest?.("input, textarea, select"));
  const inGrid = Boolean(event.target.closest?.(".grid"));
  const key = keys.keyAction(event, { selected: state.selected, inField, inGrid });
  if (!key) return;
  if (key.prevent) event.preventDefault();
  if (key.action === "undo") undo();
  else if (key.action === "erase") erase();
  else if (key.action === "input") input(key.digit, key.pencil);
  else if (key.action === "move") move(key.dr, key.dc);
  else if (key.action === "pencil") togglePencil();
  else if (key.action === "hint") showHint();
}

async function showStats() {
  try {
    const stats = await fetchStats();
    panels.showStats(statsLine(stats), (difficulty) => hasPuzzles(stats, difficulty));
  } catch {
    // The counts are a nicety; the game does not need them.
  }
}

async function showTechniques() {
  try {
    panels.showTechniques(techniqueOptions(await fetchTechniques()));
  } catch {
    // Without the catalogue the picker offers nothing; the other buttons still work.
  }
}

function wire() {
  document.addEventListener("keydown", onKey);
  for (const button of document.querySelectorAll("[data-difficulty]")) {
    button.addEventListener("click", () => load({ difficulty: button.dataset.difficulty, push: true }));
  }
  $("daily").addEventListener("click", async () => {
    if (await load({ daily: true, push: true })) say("The puzzle of the day (UTC): everyone gets this one today.");
  });
  $("technique").addEventListener("change", async (event) => {
    const select = event.currentTarget;
    const technique = select.value;
    if (!technique) return;
    // Back to the placeholder, so picking the same technique again gives another puzzle.
    select.value = "";
    if (await load({ technique, push: true })) say(`This puzzle's solution needs ${technique}.`);
  });
  $("pencil").addEventListener("click", togglePencil);
  $("erase").addEventListener("click", erase);
  $("undo").addEventListener("click", undo);
  $("hint").addEventListener("click", showHint);
  $("check").addEventListener("click", check);
  $("reveal-cell").addEventListener("click", revealCell);
  $("reveal-all").addEventListener("click", (e) => confirmFirst(e.currentTarget, "Sure? Reveal all", revealAll));
  $("restart").addEventListener("click", (e) => confirmFirst(e.currentTarget, "Sure? Restart", restart));
  $("automarks").addEventListener("click", autoMarks);
  $("hint-apply").addEventListener("click", applyHint);
  $("hint-close").addEventListener("click", () => {
    hideHint();
    render();
  });
  $("copy-link").addEventListener("click", copyLink);
  $("copy-embed").addEventListener("click", copyEmbed);
  $("error-retry").addEventListener("click", messages.runErrorAction);
  $("error-close").addEventListener("click", hideError);
  $("open-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const code = puzzleCode($("open-code").value);
    if (code) load({ id: code, push: true });
  });
  window.addEventListener("popstate", () => {
    const id = requestedId(location.pathname, location.search);
    if (id && id.toUpperCase() !== state.record?.canonical_id) load({ id });
  });
  document.addEventListener("visibilitychange", () => {
    if (document.hidden) stopTimer();
    else startTimer();
  });
  window.addEventListener("pagehide", save);
  setInterval(tick, 500);
  // The timer survives a reload: save it now and then, not only on moves.
  setInterval(() => state.record && !state.solved && save(), 5000);
}

const board = new Board({ onSelect: (i) => select(i), onDigit: (d) => input(d, false) });
wire();
const first = requestedId(location.pathname, location.search);
load(first ? { id: first } : {});
showStats();
showTechniques();
