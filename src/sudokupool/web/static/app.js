// The page that plays the pool: the game (player.js, shared with the embeddable player) plus the hints,
// reveals, puzzle choice and panels around it. Plain ES modules, no build step. Views: board.js draws the
// grid and the pad, panels.js the hint, details and share cards, messages.js the status line and the
// banners. Pure logic, unit-tested, no DOM: sudoku.js (grid and hints), game.js (the moves and undo), api.js
// (the unversioned API and the engine's grids), store.js (saved games and the clock), keys.js (key presses to
// actions), pasted.js (a pasted puzzle read as `sudokupool grade` reads one), labels.js and hints.js (what the
// page says). The grid lives in player.js's `state`; every change goes through its
// `commit`. The board derives every class and label from `state`, so the DOM never holds game state.

// Load the modules with this file's own ?v= so they are cached (and replaced) together with it. A static
// `import` cannot carry the version, and an unversioned URL would be revalidated on every visit.
const version = new URL(import.meta.url).search;
const [player, sudoku, game, api, labels, hints, panels, messages, store, pasted] = await Promise.all(
  ["player", "sudoku", "game", "api", "labels", "hints", "panels", "messages", "store", "pasted"].map((name) =>
    import(`./${name}.js${version}`),
  ),
);
const { $, createPlayer, gameKey, savedGame } = player;
const { cellIndex, cellName, nextHint } = sudoku;
const { fetchGrid, fetchGridHint, fetchPuzzle, fetchSet, fetchStats, fetchTechniques, imageUrl, printUrl } = api;
const { detailRows, hasPuzzles, loadFailure, puzzleCode, requestedId, statsLine } = labels;
const { embedSnippet, engineFailure, gridUrl, pastedNews, requestedGrid, stepNews, techniqueOptions } = labels;
const { apiHint, hintFailureView, hintNews, hintView } = hints;
const { announce, say, showError, hideError, confirmFirst } = messages;

const { state, render, focusBoard, commit, needSolution, check, begin: beginGame, save } = createPlayer({
  texts: {
    selectFirst: "Select a cell first (click it, or move there with the arrow keys).",
    pencilOn: "Pencil marks on: digits toggle small marks.",
    pencilOff: "Pencil marks off: digits fill cells.",
  },
  onValuesChanged: hideHint,
  solutionError: (text) => showError(text, { label: "Try again", run: hideError }),
  keyActions: { hint: showHint },
});
state.hintSeen = new Set(); // removal-only steps already shown
state.lastRequest = null;

// ---- playing ---------------------------------------------------------------------------------------

function autoMarks() {
  if (!state.record || state.solved) return;
  game.fillMarks(state);
  say("Every empty cell now shows its candidates.");
  commit({ valuesChanged: false });
}

// ---- the solution: reveal ------------------------------------------------------------------------------

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

// ---- hints -----------------------------------------------------------------------------------------

function showHint() {
  const record = state.record;
  if (!record || state.solved) return;
  if (record.pasted) return showServerHint(record);
  const hint = nextHint(record.puzzle, state.values, state.marks, record.solve_path, state.solution, state.hintSeen);
  showFound(hint, record);
}

/** A pasted puzzle's hint comes from the server, found from the board and its pencil marks as they are. */
async function showServerHint(record) {
  const board = state.values.join("");
  $("hint").setAttribute("aria-busy", "true");
  let hint;
  try {
    hint = apiHint(await fetchGridHint(record.puzzle, state.values, state.marks));
  } catch (error) {
    if (state.record !== record) return;
    state.hint = null;
    const view = hintFailureView(engineFailure(error));
    say("");
    panels.showHint(view);
    announce(hintNews(view));
    return;
  } finally {
    $("hint").removeAttribute("aria-busy");
  }
  // A hint for a board the player has changed since asking is no use.
  if (state.record !== record || state.values.join("") !== board || state.solved) return;
  showFound(hint, record);
}

function showFound(hint, record) {
  state.hint = hint;
  if (hint.kind === "step" && hint.index !== undefined && !hint.step.placements?.length) state.hintSeen.add(hint.index);
  if (hint.kind === "mistake") state.wrong = new Set(hint.cells);
  const view = hintView(hint, record.solve_path?.length ?? 0);
  say("");
  panels.showHint(view);
  announce(hintNews(view));
  render();
}

function hideHint() {
  state.hint = null;
  panels.hideHint();
}

/** Carries out the hint's step; focus goes to the cell it filled (else the selected one) and the news says
 *  what changed, since the panel, and the button that had focus, go away. */
function applyHint() {
  const hint = state.hint;
  if (hint?.kind !== "step" || state.solved) return;
  const filled = cellIndex(hint.step.placements?.[0]?.cell ?? "");
  game.followStep(state, hint.step);
  say("");
  announce(stepNews(hint.step));
  commit({ valuesChanged: true });
  focusBoard(filled >= 0 ? filled : state.selected);
}

function closeHint() {
  hideHint();
  render();
  focusBoard();
  announce("Hint hidden.");
}

// ---- loading a puzzle ------------------------------------------------------------------------------

/** Plays the puzzle pasted as `text` (pasted.js reads it): the pool's record in the layout pasted, or its live
 *  grade; what went wrong is said under the field. True when it is on the board. */
async function playPasted(text, { push = true } = {}) {
  const field = $("paste-grid");
  const read = pasted.readPasted(text);
  if (read.error) return pasteError(read.error);
  pasteError("");
  $("paste-play").disabled = true;
  say("Looking the puzzle up…");
  $("main").setAttribute("aria-busy", "true");
  try {
    const record = { ...(await fetchGrid(read.grid)), pasted: true };
    hideError();
    begin(record, savedGame(gameKey(record)));
    const url = gridUrl(record.puzzle);
    if (location.pathname + location.search !== url) history[push ? "pushState" : "replaceState"]({}, "", url);
    field.value = "";
    say(pastedNews(record));
    return true;
  } catch (error) {
    say("");
    pasteError(engineFailure(error));
    return false;
  } finally {
    $("paste-play").disabled = false;
    $("main").setAttribute("aria-busy", "false");
  }
}

/** Says under the paste field what is wrong with it (`text`; "" clears it), and keeps focus there. */
function pasteError(text) {
  const field = $("paste-grid");
  $("paste-error").textContent = text;
  if (text) {
    field.setAttribute("aria-invalid", "true");
    field.focus();
  } else {
    field.removeAttribute("aria-invalid");
  }
  return false;
}

/** Load the puzzle `request` asks for (api.js's `puzzlePath`); true when it is on the board. */
async function load(request) {
  state.lastRequest = request;
  $("main").setAttribute("aria-busy", "true");
  document.body.classList.add("loading");
  try {
    const record = await fetchPuzzle(request);
    hideError();
    begin(record, savedGame(gameKey(record)));
    const url = `/p/${record.canonical_id}`;
    if (location.pathname !== url || location.search) {
      history[request.push ? "pushState" : "replaceState"]({ id: record.canonical_id }, "", url);
    }
    return true;
  } catch (error) {
    // Offline (no answer at all): a random puzzle comes from the set kept for offline play, if any.
    const kept = error?.status === 0 && !request.id && !request.daily ? takeKept() : null;
    if (kept) {
      hideError();
      begin(kept, savedGame(kept.canonical_id));
      say(`Offline: playing a kept puzzle (${store.setSize(localStorage)} left).`);
      return true;
    }
    reportLoadError(error, request);
    return false;
  } finally {
    $("main").setAttribute("aria-busy", "false");
    document.body.classList.remove("loading");
  }
}

function takeKept() {
  try {
    return store.takeFromSet(localStorage);
  } catch {
    return null; // storage disabled
  }
}

/** Fetch a set of the chosen size and keep it for offline play. */
async function keepSetForOffline(event) {
  event.preventDefault();
  const count = Number($("set-count").value);
  $("set-status").textContent = "Fetching…";
  try {
    const body = await fetchSet(count, "");
    store.keepSet(localStorage, body.puzzles);
    $("set-status").textContent =
      `${body.puzzles.length} puzzles kept in this browser: New puzzle plays them while you are offline.`;
  } catch (error) {
    $("set-status").textContent = `Could not keep a set: ${error.message}`;
  }
}

function reportLoadError(error, request) {
  const { text, label, retry } = loadFailure(error, request, Boolean(state.record));
  showError(text, { label, run: () => load(retry) });
  document.body.classList.toggle("empty", !state.record);
}

function begin(record, saved) {
  hideHint();
  say("");
  messages.hideSuccess();
  document.body.classList.remove("empty");
  state.hintSeen = new Set();
  beginGame(record, saved);
  panels.showDetails(record, detailRows(record, state.givens.filter(Boolean).length));
  const id = record.canonical_id;
  if (record.pasted) {
    // The pictures, print sheet and embed of a code show the pool's own layout, if the pool has it at all.
    panels.showPastedShare(record.in_pool ? id : null, `${location.origin}${gridUrl(record.puzzle)}`);
  } else {
    panels.showShare(id, { puzzle: imageUrl(id, "puzzle"), solution: imageUrl(id, "solution") });
    const snippet = embedSnippet(location.origin, id);
    panels.showEmbed(id, { snippet, svg: imageUrl(id, "puzzle", "svg"), print: printUrl(id) });
  }
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

// ---- wiring ----------------------------------------------------------------------------------------

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
  $("hint").addEventListener("click", showHint);
  $("check").addEventListener("click", check);
  $("reveal-cell").addEventListener("click", revealCell);
  $("reveal-all").addEventListener("click", (e) => confirmFirst(e.currentTarget, "Sure? Reveal all", revealAll));
  $("restart").addEventListener("click", (e) => confirmFirst(e.currentTarget, "Sure? Restart", restart));
  $("automarks").addEventListener("click", autoMarks);
  $("hint-apply").addEventListener("click", applyHint);
  $("hint-close").addEventListener("click", closeHint);
  // The skip link lands on the grid's cell that Tab reaches, which selects it.
  document.querySelector(".skip").addEventListener("click", (event) => {
    event.preventDefault();
    focusBoard();
  });
  $("copy-link").addEventListener("click", copyLink);
  $("set-form").addEventListener("submit", keepSetForOffline);
  $("copy-embed").addEventListener("click", copyEmbed);
  $("error-close").addEventListener("click", hideError);
  $("open-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const code = puzzleCode($("open-code").value);
    if (code) load({ id: code, push: true });
  });
  $("paste-form").addEventListener("submit", (event) => {
    event.preventDefault();
    playPasted($("paste-grid").value);
  });
  window.addEventListener("popstate", () => {
    const grid = requestedGrid(location.search);
    if (grid) {
      if (!state.record?.pasted || state.record.puzzle !== pasted.readPasted(grid).grid) playPasted(grid, { push: false });
      return;
    }
    const id = requestedId(location.pathname, location.search);
    if (id && (id.toUpperCase() !== state.record?.canonical_id || state.record?.pasted)) load({ id });
  });
}

wire();
const grid = requestedGrid(location.search);
const first = requestedId(location.pathname, location.search);
// A pasted puzzle's address plays it again; should it fail, a puzzle of the pool comes instead.
if (grid) playPasted(grid, { push: false }).then((played) => played || load({}));
else load(first ? { id: first } : {});
showStats();
showTechniques();
