// SPDX-License-Identifier: LGPL-2.1-or-later
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
