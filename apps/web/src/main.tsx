// The web client's entry: the state modules (each registers its /register and event handlers on
// import), the page, then the event queue. The first message list is fetched in parallel with
// /register (messages.ts catches up once the queue exists, so nothing sent in between is lost).
import { render } from "preact";
import "./state/realm-data";
import "./state/user-topics";
import "./state/unread";
import "./state/conversations";
import "./state/presence";
import "./state/typing";
import "./ui/layout/notifications";
import { startEvents } from "./state/events";
import { showNarrow } from "./state/messages";
import { startPresence } from "./state/presence";
import { currentNarrow } from "./state/route";
import { App } from "./ui/App";
import { installKeyboard } from "./ui/layout/keyboard";
import { installTheme } from "./ui/layout/theme";
import { focusSearch } from "./ui/search/SearchBar";

installTheme();
showNarrow(currentNarrow.value);
render(<App />, document.getElementById("app")!);
installKeyboard(focusSearch);
void startEvents().then(() => startPresence());
