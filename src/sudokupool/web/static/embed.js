// The embeddable player (/embed/{id}): one puzzle, the board, the pad and Check, nothing else of the site.
// The game itself is player.js's, the same as the page's, with its own progress per puzzle kept the same
// way. It never changes the address (it lives in someone else's page) and links out to the full player for
// hints, sharing and other puzzles.

const version = new URL(import.meta.url).search;
const [player, api, labels, messages] = await Promise.all(
  ["player", "api", "labels", "messages"].map((name) => import(`./${name}.js${version}`)),
);
const { $, createPlayer, savedGame } = player;
const { embeddedId, loadFailure } = labels;
const { say, showError, hideError } = messages;

const { state, begin, check, render } = createPlayer({
  texts: { selectFirst: "Select a cell first.", pencilOn: "Pencil marks on.", pencilOff: "Pencil marks off." },
  solutionError: say,
});

async function load(request) {
  $("main").setAttribute("aria-busy", "true");
  try {
    const record = await api.fetchPuzzle(request);
    begin(record, savedGame(record.canonical_id));
    $("status-difficulty").textContent = record.difficulty ?? "?";
    $("status-difficulty").dataset.level = String(record.difficulty_level ?? "");
    const code = $("status-code");
    code.textContent = record.canonical_id;
    code.href = `/p/${encodeURIComponent(record.canonical_id)}`;
    $("embed-title").textContent = `Sudoku puzzle ${record.canonical_id}`;
    render();
    hideError();
  } catch (error) {
    const { text, label, retry } = loadFailure(error, request, false);
    showError(text, { label, run: () => load(retry) });
  } finally {
    $("main").setAttribute("aria-busy", "false");
  }
}

// Once solved, Check has nothing left to say here.
$("check").addEventListener("click", () => state.solved || check());
load({ id: embeddedId(location.pathname) ?? "" });
