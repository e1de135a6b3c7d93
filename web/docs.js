// Starts Swagger UI on /docs (api/docs.py): a file, not an inline script, so the CSP holds.
"use strict";

(() => {
  const root = document.getElementById("swagger-ui");
  window.ui = SwaggerUIBundle({
    url: root.dataset.openapi || "/openapi.json",
    dom_id: "#swagger-ui",
    deepLinking: true,
    validatorUrl: null, // the online validator's badge is an image from another origin
  });
})();
