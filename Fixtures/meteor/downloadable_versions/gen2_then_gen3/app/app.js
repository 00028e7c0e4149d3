console.log('app generation 3');
