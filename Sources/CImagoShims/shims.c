#include "CImagoShims.h"
