// Configs with the full JSON: what a source file that saves, loads or converts configs
// includes (save_config, load_config, config_to_json, config_from_json, nlohmann::json(cfg)).
// The configs themselves and EMBER_CONFIG are in config_fwd.hpp, which headers include.
#pragma once

#include <nlohmann/json.hpp>

#include "ember/module/config_fwd.hpp"
