// The page's shared, mutable state: one object that every module reads and writes. (A module's
// exported binding is read-only to the modules that import it; the object's fields are not.)
export const state = {
  csrf: null, auth: "password", user: null, chats: [], current: null, sending: false,
  nextChats: null, loadingChats: false, stream: null, // stream: the answer this page follows
  interview: null, // the interview panel's paper and transcript
  view: "chat", // what the main area shows: "chat" or "inbox"
  // paper id → 1 (👍), -1 (👎) or 0, as this page last saw it: a paper's buttons agree everywhere
  ratings: new Map(),
  inbox: null, // the inbox view's window, papers and profile (modules/inbox.js)
};

export const CHAT_PAGE = 50; // chats per page of GET /api/chats; its X-Next-Cursor header starts the next
