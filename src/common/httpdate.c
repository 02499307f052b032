/*
 * IMF-fixdate. Calendar conversion after Howard Hinnant's
 * days_from_civil / civil_from_days (public domain algorithms).
 */
#include <string.h>

#include "httpdate.h"

#define SECS_PER_DAY	86400
/* 0000-01-01 and 9999-12-31 23:59:59 in Unix seconds. */
#define EPOCH_MIN	(-62167219200LL)
#define EPOCH_MAX	(253402300799LL)

static const char	days[7][4] = {
	"Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"	/* from 1970-01-01 */
};
static const char	months[12][4] = {
	"Jan", "Feb", "Mar", "Apr", "May", "Jun",
	"Jul", "Aug", "Sep", "Oct", "Nov", "Dec"
};

int64_t
days_from_civil(int64_t y, int m, int d)
{
	int64_t		era, yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return (era * 146097 + doe - 719468);
}

static void
civil_from_days(int64_t z, int64_t *y, int *m, int *d)
{
	int64_t		era, doe, yoe, doy, mp;

	z += 719468;
	era = (z >= 0 ? z : z - 146096) / 146097;
	doe = z - era * 146097;
	yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	mp = (5 * doy + 2) / 153;
	*d = (int)(doy - (153 * mp + 2) / 5 + 1);
	*m = (int)(mp < 10 ? mp + 3 : mp - 9);
	*y = yoe + era * 400 + (*m <= 2);
}

/* Weekday index into days[] of a day number (0 = 1970-01-01). */
static int
weekday(int64_t daynum)
{
	int64_t		w = daynum % 7;

	return ((int)(w < 0 ? w + 7 : w));
}

static int
days_in_month(int64_t y, int m)
{
	static const int	mdays[12] = {
		31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31
	};
	int			leap;

	leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
	return (m == 2 && leap ? 29 : mdays[m - 1]);
}

/* n ASCII digits at s; -1 if any is not a digit. */
static int
digits(const char *s, int n)
{
	int	v = 0, i;

	for (i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return (-1);
		v = v * 10 + (s[i] - '0');
	}
	return (v);
}

static int
name_index(const char *s, const char (*names)[4], int count)
{
	int	i;

	for (i = 0; i < count; i++) {
		if (memcmp(s, names[i], 3) == 0)
			return (i);
	}
	return (-1);
}

int
httpdate_parse(const char *s, int64_t *epoch)
{
	int64_t		daynum;
	int		wd, day, mon, year, hh, mm, ss;

	if (s == NULL || epoch == NULL || strnlen(s, HTTPDATE_LEN + 1) !=
	    HTTPDATE_LEN)
		return (-1);
	/* "Sun, 06 Nov 1994 08:49:37 GMT": fixed punctuation first. */
	if (s[3] != ',' || s[4] != ' ' || s[7] != ' ' || s[11] != ' ' ||
	    s[16] != ' ' || s[19] != ':' || s[22] != ':' ||
	    memcmp(s + 25, " GMT", 4) != 0)
		return (-1);
	if ((wd = name_index(s, days, 7)) == -1 ||
	    (mon = name_index(s + 8, months, 12)) == -1)
		return (-1);
	if ((day = digits(s + 5, 2)) == -1 || (year = digits(s + 12, 4)) ==
	    -1 || (hh = digits(s + 17, 2)) == -1 ||
	    (mm = digits(s + 20, 2)) == -1 || (ss = digits(s + 23, 2)) == -1)
		return (-1);
	mon++;
	if (day < 1 || day > days_in_month(year, mon) || hh > 23 || mm > 59 ||
	    ss > 59)
		return (-1);

	daynum = days_from_civil(year, mon, day);
	if (weekday(daynum) != wd)
		return (-1);
	*epoch = daynum * SECS_PER_DAY + hh * 3600 + mm * 60 + ss;
	return (0);
}

static void
put2(char *p, int v)
{
	p[0] = (char)('0' + v / 10);
	p[1] = (char)('0' + v % 10);
}

int
httpdate_format(int64_t epoch, char out[30])
{
	int64_t		daynum, secs, y;
	int		m, d;

	if (out == NULL || epoch < EPOCH_MIN || epoch > EPOCH_MAX)
		return (-1);
	daynum = epoch / SECS_PER_DAY;
	secs = epoch % SECS_PER_DAY;
	if (secs < 0) {
		secs += SECS_PER_DAY;
		daynum--;
	}
	civil_from_days(daynum, &y, &m, &d);

	memcpy(out, days[weekday(daynum)], 3);
	memcpy(out + 3, ", ", 2);
	put2(out + 5, d);
	out[7] = ' ';
	memcpy(out + 8, months[m - 1], 3);
	out[11] = ' ';
	put2(out + 12, (int)(y / 100));
	put2(out + 14, (int)(y % 100));
	out[16] = ' ';
	put2(out + 17, (int)(secs / 3600));
	out[19] = ':';
	put2(out + 20, (int)(secs / 60 % 60));
	out[22] = ':';
	put2(out + 23, (int)(secs % 60));
	memcpy(out + 25, " GMT", 5);	/* with the NUL */
	return (0);
}
