// Placeholder removed once op families add their own files.
#include "backends.hpp"
