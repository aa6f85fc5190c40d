// One number before and after, and how it moved.
#pragma once

namespace stepscope::diff {

struct Change {
  double before = 0;
  double after = 0;
  double change = 0;      // after - before, in the unit of the values
  double change_pct = 0;  // 100 * change / before, % (0 when before is 0)
};

inline Change change_of(double before, double after) {
  Change c;
  c.before = before;
  c.after = after;
  c.change = after - before;
  c.change_pct = before != 0 ? 100.0 * c.change / before : 0.0;
  return c;
}

}  // namespace stepscope::diff
