// The chart library inlined into the HTML report: Vega, Vega-Lite and vega-embed at the versions
// locked in report/web/package-lock.json, vendored under report/web/vendor and embedded at build
// time (src/report/embed_assets.cmake). None of them contains "</script" or "<!--".
#pragma once

#include <string>
#include <string_view>

namespace stepscope::report {

const std::string& VegaJs();       // vega.min.js (UMD: defines window.vega)
const std::string& VegaLiteJs();   // vega-lite.min.js (window.vegaLite)
const std::string& VegaEmbedJs();  // vega-embed.min.js (window.vegaEmbed)
// report/web/vendor/versions.json: {"vega": "...", "vega-lite": "...", "vega-embed": "..."}.
std::string_view ChartLibraryVersions();

}  // namespace stepscope::report
