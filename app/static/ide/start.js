// GraphiQL for this API: its fetcher over HTTP and WebSocket, the explorer plugin, and the editors filled
// from a shared link (?query=, variables=, operationName=; GraphQL Yoga's and GraphiQL's names) or, on a
// first visit, from the starter query the page carries. What is typed is written back to the address, so
// the address is always a link to what is on screen. Headers are never put in the address (they may hold
// a token); GraphiQL keeps them in the browser's storage.
(function () {
  "use strict";
  const parameters = new URLSearchParams(window.location.search);
  const starter = JSON.parse(document.getElementById("starter-query").textContent);
  const shared = parameters.get("query") ?? parameters.get("q");  // `q`: the links of Strawberry's page
  const sharedOperation = parameters.get("operationName") ?? undefined;

  function remember(name, value) {
    if (value) parameters.set(name, value);
    else parameters.delete(name);
    parameters.delete("q");
    const search = parameters.toString();
    history.replaceState(null, "", search ? "?" + search : window.location.pathname);
  }

  const url = window.location.href.split("?")[0];
  const socket = new URL(url);
  socket.protocol = socket.protocol === "https:" ? "wss:" : "ws:";
  const fetcher = GraphiQL.createFetcher({ url: url, subscriptionUrl: socket.toString() });

  function Page() {
    const [query, setQuery] = React.useState(shared ?? starter);
    const [variables, setVariables] = React.useState(parameters.get("variables") ?? undefined);
    return React.createElement(GraphiQL, {
      fetcher: fetcher,
      plugins: [GraphiQLPluginExplorer.explorerPlugin()],
      query: query,
      variables: variables,
      operationName: sharedOperation,  // where the editor starts; GraphiQL follows the query from there
      defaultEditorToolsVisibility: true,
      isHeadersEditorEnabled: true,
      shouldPersistHeaders: true,
      inputValueDeprecation: true,
      onEditQuery: function (value) { setQuery(value); remember("query", value === starter ? "" : value); },
      onEditVariables: function (value) { setVariables(value); remember("variables", value); },
      onEditOperationName: function (value) { remember("operationName", value); },
    });
  }

  ReactDOM.createRoot(document.getElementById("graphiql")).render(React.createElement(Page));
})();
