// The panel's one way to the server: GraphQL over HTTP on the same origin, signed in by the session cookie.
// An error of the API becomes an ApiError with the API's message and its extensions.code, shown as they are.

export class ApiError extends Error {
  constructor(message, code) {
    super(message);
    this.code = code || "ERROR";
  }
}

export async function gql(query, variables = {}) {
  let response;
  try {
    response = await fetch("/graphql", {
      method: "POST", credentials: "same-origin",
      headers: { "content-type": "application/json", accept: "application/graphql-response+json, application/json" },
      body: JSON.stringify({ query, variables }),
    });
  } catch (failure) {
    throw new ApiError(String(failure), "NETWORK");
  }
  let body;
  try {
    body = await response.json();
  } catch {
    throw new ApiError(`HTTP ${response.status}`, `HTTP_${response.status}`);
  }
  if (body.errors && body.errors.length) {
    const first = body.errors[0];
    throw new ApiError(first.message, (first.extensions || {}).code);
  }
  return body.data;
}

// An operation that answers {success, error}: its error, if any, thrown as the others are.
export async function act(query, variables, field) {
  const data = await gql(query, variables);
  const result = data[field];
  if (result && result.success === false) throw new ApiError(result.error || "refused", "REFUSED");
  return result;
}
